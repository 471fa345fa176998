// Package phase times skbtrace's start-up: each step marks its end
// (Mark), and -v prints the steps' durations (String) with the "loaded
// and attached" line, so that a slow start says where it went: decoding
// the kernel's BTF, discovery, the programs' verification, the links.
//
// The marks are process-wide, as the start is: the steps live in several
// packages (runtime/kernel, runtime/pipeline, runtime/session), none of
// which sees the others' clocks.
package phase

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

var (
	mu sync.Mutex
	// start is when the process began (this package's initialisation,
	// before main).
	start = time.Now()
	last  = start
	steps []step
)

// step is a named span of the start, ended by Mark.
type step struct {
	name string
	took time.Duration
}

// Mark ends the step called name: the time since the previous mark (or
// the process's start) is its. A step marked twice adds up.
func Mark(name string) {
	mu.Lock()
	defer mu.Unlock()
	now := time.Now()
	for i := range steps {
		if steps[i].name == name {
			steps[i].took += now.Sub(last)
			last = now
			return
		}
	}
	steps = append(steps, step{name, now.Sub(last)})
	last = now
}

// Elapsed is the time since the process's start.
func Elapsed() time.Duration { return time.Since(start) }

// String says the steps marked so far, in order, with the total:
// "start-up 1.92s: btf 610ms, check 40ms, ...".
func String() string {
	mu.Lock()
	defer mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "start-up %v:", last.Sub(start).Round(time.Millisecond))
	for i, s := range steps {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&b, "%s %s %v", sep, s.name, s.took.Round(time.Millisecond))
	}
	return b.String()
}
