package session

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// stepsOnTracepoints compiles a script on every skb tracepoint (this host
// has neither kprobes nor fentry) and makes a step of each program as an
// fentry one: loaded alone, ahead of its link, which is what the machinery
// of per-function programs does whatever the attach type.
func stepsOnTracepoints(t *testing.T) (*Session, []step) {
	t.Helper()
	spec, err := kernel.BTF()
	if err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
	targets := ResolveSkbFallback(spec, map[string]bool{"*": true})
	if len(targets["*"]) < 4 {
		t.Skipf("%d skb tracepoints", len(targets["*"]))
	}
	_, out := compiletest.Compile(t, `skb:* { @[probe] = count() }`, check.Options{}, codegen.Options{SkbTargets: targets})
	coll, err := LoadWith(out, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coll.Close)
	s := &Session{out: out, coll: coll}
	var steps []step
	for _, p := range out.Programs {
		steps = append(steps, step{fn: p.Name, prog: p, fentry: true})
	}
	return s, steps
}

// TestRunStepsLoadsAheadInOrder: every step's program is loaded (on every
// CPU, ahead of its link) and linked, in the steps' order, and no
// descriptor is left but the links'.
func TestRunStepsLoadsAheadInOrder(t *testing.T) {
	s, steps := stepsOnTracepoints(t)
	before := openFDs()
	st := &AttachStats{Skipped: map[string][]string{}}
	var links []link.Link
	s.runSteps(steps, st, &links, &progress{}, nil)
	if len(links) != len(steps) || st.Attached != len(steps) || len(st.Skipped) != 0 {
		t.Fatalf("%d links, %d attached of %d steps, skipped %v", len(links), st.Attached, len(steps), st.Skipped)
	}
	// Each link runs its step's program, loaded again alone: its name.
	for i, l := range links {
		info, err := l.Info()
		if err != nil {
			t.Fatal(err)
		}
		prog, err := ebpf.NewProgramFromID(info.Program)
		if err != nil {
			t.Fatal(err)
		}
		pi, err := prog.Info()
		prog.Close()
		want, werr := s.coll.Programs[steps[i].prog.Name].Info()
		if werr != nil {
			t.Fatal(werr)
		}
		wantID, _ := want.ID()
		gotID, _ := pi.ID()
		if err != nil || pi.Name != want.Name || gotID == wantID {
			t.Errorf("link %d runs %+v, want a copy of %s", i, pi, steps[i].prog.Name)
		}
	}
	if got := openFDs() - before; got != len(links) {
		t.Errorf("%d descriptors more after attaching, %d links", got, len(links))
	}
	for _, l := range links {
		l.Close()
	}
	if got := openFDs(); got != before {
		t.Errorf("%d descriptors after closing the links, %d before", got, before)
	}
}

// TestAttachRestStops: a progressive start's background attach gives
// Done the whole figures when it ends, and one stopped at once attaches
// fewer than all, closes what it loaded ahead, and hands its links over.
func TestAttachRestStops(t *testing.T) {
	s, steps := stepsOnTracepoints(t)
	first := &AttachStats{Backend: BackendFentry, Skipped: map[string][]string{}, Attached: 1, Main: 1, Rest: len(steps) - 1}
	done := make(chan *AttachStats, 1)
	released := atomic.Bool{}
	s.attachRest(steps[1:], first, &progress{}, func(st *AttachStats) { done <- st }, time.Now(), func() { released.Store(true) })
	var all *AttachStats
	select {
	case all = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the rest did not attach within a minute")
	}
	<-s.restDone
	if all.Attached != len(steps) || all.Main != 1 || all.Rest != len(steps)-1 || s.FuncStats() != all || !released.Load() {
		t.Errorf("done with %+v (stats %p, released %v); want %d attached", all, s.FuncStats(), released.Load(), len(steps))
	}
	s.stopRest()
	if len(s.links) != len(steps)-1 {
		t.Errorf("%d links handed over, want %d", len(s.links), len(steps)-1)
	}
	closeLinks(s.links, nil)
	s.links = nil

	before := openFDs()
	s.statsMu.Lock()
	s.stats = nil
	s.statsMu.Unlock()
	called := false
	s.attachRest(steps, first, &progress{}, func(*AttachStats) { called = true }, time.Now(), func() {})
	s.stopRest()
	if called || len(s.links) > len(steps) {
		t.Errorf("stopped: Done called %v, %d links", called, len(s.links))
	}
	if got := openFDs() - before; got != len(s.links) {
		t.Errorf("stopped: %d descriptors more, %d links", got, len(s.links))
	}
	closeLinks(s.links, nil)
}
