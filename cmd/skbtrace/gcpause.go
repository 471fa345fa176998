package main

import (
	"runtime/debug"
	"runtime/metrics"
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
//
// A script whose start holds more than the limit (a script of 100,000
// probes) would have the collector run again and again under it, each time
// over a live heap that does not shrink (half the CPU, and most of the
// start's time): once the heap passes half the limit, the collector
// resumes as usual.
func pauseGC() (resume func()) {
	pct := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(-1) // -1 reads it
	debug.SetMemoryLimit(min(limit, startupMemoryLimit))
	done := make(chan struct{})
	resume = sync.OnceFunc(func() {
		close(done)
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(pct)
	})
	go func() {
		t := time.NewTicker(gcWatchPeriod)
		defer t.Stop()
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > startupMemoryLimit/2 {
				resume()
				return
			}
		}
	}()
	return resume
}

// gcWatchPeriod is how often pauseGC looks at the heap.
const gcWatchPeriod = 10 * time.Millisecond

// resumeGCLater calls resume gcResumeDelay from now, unless it ran before.
func resumeGCLater(resume func()) func() {
	return func() { time.AfterFunc(gcResumeDelay, resume) }
}
