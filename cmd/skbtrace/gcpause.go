package main

import (
	"runtime/debug"
	"sync"
	"time"
)

// startupMemoryLimit bounds the heap while the garbage collector is paused.
const startupMemoryLimit = 512 << 20

// gcResumeDelay is how long into tracing the collector stays paused: its
// first cycle, over all that starting left, would otherwise compete with
// a short -c command for the CPUs, for memory the exit frees anyway.
const gcResumeDelay = time.Second

// pauseGC turns the garbage collector off while skbtrace starts, until
// resume. Starting allocates a few tens of MB that mostly stay live (the
// kernel's BTF decoded, the script's types and programs), and the collector,
// run again and again as the heap grows from nothing, cost a one-liner some
// milliseconds of its start. A soft memory limit still collects where a
// large script allocates more.
func pauseGC() (resume func()) {
	pct := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(-1) // -1 reads it
	debug.SetMemoryLimit(min(limit, startupMemoryLimit))
	return sync.OnceFunc(func() {
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(pct)
	})
}

// resumeGCLater calls resume gcResumeDelay from now, unless it ran before.
func resumeGCLater(resume func()) func() {
	return func() { time.AfterFunc(gcResumeDelay, resume) }
}
