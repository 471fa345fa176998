package session

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"time"
)

// detachReportEnv names a file the detach helper appends its figures to
// (closeTimes' line), for a benchmark that reads them where no terminal
// shows them (bench/vm/teardown.sh).
const detachReportEnv = "SKBTRACE_DETACH_REPORT"

// closeTimes collects how long each link's close took in the detach
// helper, and how long the helper waited at the attach gate.
type closeTimes struct {
	mu      sync.Mutex
	took    []time.Duration
	gated   time.Duration
	workers int
}

func (c *closeTimes) add(took, gated time.Duration) {
	c.mu.Lock()
	c.took = append(c.took, took)
	c.gated += gated
	c.mu.Unlock()
}

// String says what the closes came to: how many, in how long, by how
// many workers, the time one close took (median, 90th percentile, largest)
// and their sum, which over the whole time says how far the kernel let
// them overlap (1x: one at a time).
func (c *closeTimes) String(elapsed time.Duration) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := slices.Clone(c.took)
	slices.Sort(d)
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	at := func(q float64) time.Duration {
		if len(d) == 0 {
			return 0
		}
		return d[min(len(d)-1, int(q*float64(len(d))))]
	}
	overlap := 0.0
	if elapsed > 0 {
		overlap = float64(sum) / float64(elapsed)
	}
	return fmt.Sprintf("%d links closed in %v by %d workers: a close took %v (median), %v (90th percentile), %v (most), %v in all (%.1fx overlapped); %v waiting at the attach gate",
		len(d), elapsed.Round(time.Millisecond), c.workers, at(0.5).Round(time.Microsecond), at(0.9).Round(time.Microsecond),
		at(1).Round(time.Microsecond), sum.Round(time.Millisecond), overlap, c.gated.Round(time.Millisecond))
}

// report appends line to the file detachReportEnv names, if any.
func reportDetach(line string) {
	name := os.Getenv(detachReportEnv)
	if name == "" {
		return
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintln(f, line)
	f.Close()
}
