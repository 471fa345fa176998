package kernel

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// tracefsDirs are where tracefs is found, in the order the kernel's
// documentation gives.
var tracefsDirs = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// Tracefs returns the directory tracefs is mounted at. Where it is not
// mounted, it mounts it at /sys/kernel/tracing, as perf does, and mounted
// says so: classic tracepoints have their format and their id there and
// nowhere else.
func Tracefs() (dir string, mounted bool, err error) {
	for _, d := range tracefsDirs {
		if _, err := os.Stat(filepath.Join(d, "events")); err == nil {
			return d, false, nil
		}
	}
	d := tracefsDirs[0]
	if err := unix.Mount("nodev", d, "tracefs", 0, ""); err != nil {
		return "", false, fmt.Errorf("tracefs is not mounted and mounting it at %s failed: %w", d, err)
	}
	return d, true, nil
}

// TracepointFormat returns a tracepoint's category (a * category resolved
// to the one that has the event) and its tracefs format file. warn is told
// when tracefs had to be mounted.
func TracepointFormat(warn func(string)) func(category, name string) (string, string, error) {
	return func(category, name string) (string, string, error) {
		dir, mounted, err := Tracefs()
		if err != nil {
			return "", "", err
		}
		if mounted && warn != nil {
			warn("mounted tracefs at " + dir + " (classic tracepoints need it)")
		}
		matches, _ := filepath.Glob(filepath.Join(dir, "events", category, name, "format"))
		if len(matches) == 0 {
			return "", "", fmt.Errorf("no tracepoint %s:%s in %s/events: %w", category, name, dir, os.ErrNotExist)
		}
		b, err := os.ReadFile(matches[0])
		if err != nil {
			return "", "", fmt.Errorf("read the format of %s:%s: %w", category, name, err)
		}
		cat := filepath.Base(filepath.Dir(filepath.Dir(matches[0])))
		return cat, string(b), nil
	}
}

// TracepointExists reports whether tracefs lists the tracepoint (a *
// category matches any). Where tracefs cannot be read it says yes, and
// attaching tells.
func TracepointExists(category, name string) bool {
	dir, _, err := Tracefs()
	if err != nil {
		return true
	}
	matches, err := filepath.Glob(filepath.Join(dir, "events", category, name))
	return err != nil || len(matches) > 0
}

// MatchTracepoints lists "CATEGORY:NAME" of the tracepoints tracefs has
// that the two globs match, in name order.
func MatchTracepoints(category, name string) ([]string, error) {
	dir, _, err := Tracefs()
	if err != nil {
		return nil, err
	}
	matches, err := filepath.Glob(filepath.Join(dir, "events", category, name, "format"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		ev := filepath.Dir(m)
		out = append(out, filepath.Base(filepath.Dir(ev))+":"+filepath.Base(ev))
	}
	slices.Sort(out)
	return out, nil
}
