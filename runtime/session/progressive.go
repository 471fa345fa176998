package session

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
)

// A progressive start (FuncAttach.Progressive) attaches the functions of a
// packet's main path first, says "tracing", and attaches the others while
// tracing: where they are many and each costs a link of its own (no
// kprobe-multi), the user sees the packets' main hops at once instead of
// after a minute. Events of what is attached are read from the start: none
// is lost in between. Detach stops the rest where it is and waits for it.

// attachRest attaches the steps left in the background; when all are done
// (not stopped), done gets what attaching every function came to: first's
// figures and the rest's, Elapsed from start. release lets the attach gate
// go (gate.go) once it ends.
func (s *Session) attachRest(rest []step, first *AttachStats, pr *progress, done func(*AttachStats), start time.Time, release func()) {
	s.restStop = &atomic.Bool{}
	s.restDone = make(chan struct{})
	pr.lines = true
	go func() {
		defer close(s.restDone)
		defer release()
		st := &AttachStats{Backend: first.Backend, Skipped: map[string][]string{}}
		s.runSteps(rest, st, &s.restLinks, pr, s.restStop)
		if s.restStop.Load() {
			return
		}
		all := &AttachStats{Backend: first.Backend, Skipped: map[string][]string{},
			Attached: first.Attached + st.Attached, Entries: first.Entries + st.Entries,
			Elapsed: time.Since(start), Main: first.Main, Rest: first.Rest,
			Loading: first.Loading + st.Loading, Linking: first.Linking + st.Linking}
		for _, sk := range []*AttachStats{first, st} {
			for r, fns := range sk.Skipped {
				all.Skipped[r] = append(all.Skipped[r], fns...)
			}
		}
		s.statsMu.Lock()
		s.stats = all
		s.statsMu.Unlock()
		if done != nil {
			done(all)
		}
	}()
}

// stopRest ends a progressive start's background attach, if any, and
// takes its links.
func (s *Session) stopRest() {
	if s.restDone == nil {
		return
	}
	s.restStop.Store(true)
	<-s.restDone
	s.links = append(s.links, s.restLinks...)
	s.restLinks, s.restDone = nil, nil
}

// loadResult is an fentry program loaded ahead of its attach.
type loadResult struct {
	prog *ebpf.Program
	err  error
}

// loader loads the fentry programs of a list of steps on as many threads
// as the process may run at once, in the steps' order: the kernel verifies
// a program in the thread that loads it, and every function's fentry
// program is verified anew. At most ahead programs wait loaded for their
// attach (each holds a file descriptor).
type loader struct {
	results []chan loadResult
	slots   chan struct{}
}

// loadAhead starts loading steps' fentry programs; stop, when set and
// true, has the rest closed unloaded.
func (s *Session) loadAhead(steps []step, stop *atomic.Bool) *loader {
	ld := &loader{results: make([]chan loadResult, len(steps))}
	var idx []int
	for i, sp := range steps {
		if sp.fentry {
			ld.results[i] = make(chan loadResult, 1)
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return ld
	}
	workers := min(runtime.GOMAXPROCS(0), len(idx))
	ld.slots = make(chan struct{}, 2*workers)
	var next atomic.Int64
	for range workers {
		go func() {
			for {
				// A slot before an index: the attach takes results in
				// order, so the lowest index waiting always has one.
				ld.slots <- struct{}{}
				k := int(next.Add(1) - 1)
				if k >= len(idx) {
					<-ld.slots
					return
				}
				i := idx[k]
				if stop != nil && stop.Load() {
					close(ld.results[i])
					continue
				}
				prog, err := LoadShared(s.coll, steps[i].prog)
				ld.results[i] <- loadResult{prog, err}
				close(ld.results[i])
			}
		}()
	}
	return ld
}

// take waits for step i's program; ok is false where it was not loaded
// (stopped).
func (ld *loader) take(i int) (loadResult, bool) {
	r, ok := <-ld.results[i]
	<-ld.slots
	return r, ok
}

// drain closes the programs of the steps from i on that were loaded but
// will not attach, and lets the loaders end.
func (ld *loader) drain(from int) {
	for i := from; i < len(ld.results); i++ {
		if ld.results[i] == nil {
			continue
		}
		if r, ok := ld.take(i); ok && r.prog != nil {
			r.prog.Close()
		}
	}
}
