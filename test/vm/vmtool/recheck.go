package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// recheck checks a case's assertions against the output a run printed for it
// (run.sh's log), without a VM: for writing and fixing cases. The exit status
// comes from the log too, and the kernel's environment for the conditions from
// its VMENV line (without one, only labels are known); "attached" assertions
// and those whose condition needs what the log does not say (btf:NAME) need
// the VM and are skipped.
func recheck(w io.Writer, kv, casePath, logPath string) int {
	c, err := parseCaseFile(casePath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	f, err := os.Open(logPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer f.Close()
	r, in := &run{Exit: -1}, false
	env := &kernelEnv{Label: kv}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "VMENV "):
			if e, ok := parseEnvLine(l); ok && e.Label == kv {
				env = e
			}
		case strings.HasPrefix(l, "=== RUN "):
			in = l == fmt.Sprintf("=== RUN %s [%s]", c.Name, kv)
		case !in:
		case strings.HasPrefix(l, "  stdout| "):
			r.Stdout = append(r.Stdout, strings.TrimPrefix(l, "  stdout| "))
		case strings.HasPrefix(l, "  stderr| "):
			r.Stderr = append(r.Stderr, strings.TrimPrefix(l, "  stderr| "))
		case strings.HasPrefix(l, "ok    exit "), strings.HasPrefix(l, "FAIL  ") && strings.Contains(l, ": exit status "):
			fmt.Sscanf(l[strings.LastIndex(l, " ")+1:], "%d", &r.Exit)
		}
	}
	rc := 0
	for _, a := range c.Asserts {
		on, err := a.Cond.holds(env)
		if err != nil {
			fmt.Fprintf(w, "skip  line %d: %v: %v\n", a.Line, a, err)
			continue
		}
		if !on || a.Kind == "attached" {
			continue
		}
		if why := r.check(a); why != "" {
			fmt.Fprintf(w, "FAIL  line %d: %v: %s\n", a.Line, a, why)
			rc = 1
		} else {
			fmt.Fprintf(w, "ok    %v\n", a)
		}
	}
	return rc
}
