package main

import (
	"bufio"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// traceableFuncs returns a lookup of the functions ftrace can trace: the
// first word of each line of tracefs' available_filter_functions (a
// module's functions carry " [module]" after the name), read at the
// first lookup. tracefs is mounted at /sys/kernel/tracing if neither it
// nor debugfs' tracing directory is there. A kernel whose list cannot be
// read traces nothing, as far as a condition can tell.
func traceableFuncs() func(string) bool {
	var (
		once  sync.Once
		names map[string]bool
	)
	return func(name string) bool {
		once.Do(func() { names = readTraceable() })
		return names[name]
	}
}

func readTraceable() map[string]bool {
	paths := []string{"/sys/kernel/tracing/available_filter_functions", "/sys/kernel/debug/tracing/available_filter_functions"}
	f, err := os.Open(paths[0])
	if err != nil {
		f, err = os.Open(paths[1])
	}
	if err != nil {
		if unix.Mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, "") != nil {
			return nil
		}
		if f, err = os.Open(paths[0]); err != nil {
			return nil
		}
	}
	defer f.Close()
	names := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) > 0 {
			names[fs[0]] = true
		}
	}
	return names
}
