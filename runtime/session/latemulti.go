package session

import (
	"maps"
	"time"

	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
)

// On kprobe-multi, an skb: probe is one program for every function of its
// glob, which reads where each function's skb is from its attach cookie
// (codegen's cookie.go): it is verified once, and a link costs one fprobe
// and one ftrace update for all its functions, whose time grows with their
// number. With FuncAttach.LateWork the functions of a packet's main path
// (mainPath) are linked first, and the others (some 1,700 for skb:*) with
// one more link while tracing, behind the attach gate, as track()'s
// trampoline helpers are (latehelpers.go); Detach waits for it.

// lateLink is a kprobe-multi program's functions left for a link while
// tracing.
type lateLink struct {
	prog    *codegen.Program
	targets []multiTarget
}

// lateMultiSplit splits a kprobe-multi program's functions into those it
// links at the start and those it links while tracing: with fa.LateWork, an
// skb: program's functions of a packet's main path first, where it has
// both; else all now.
func lateMultiSplit(p *codegen.Program, fa *FuncAttach) (now, later []multiTarget) {
	all := multiTargets(p, fa)
	if !fa.LateWork || fa.Backend != BackendKprobeMulti || p.Helper != "" || p.Return || p.Attach.Kind != codegen.AttachSkbFuncs {
		return all, nil
	}
	for _, t := range all {
		if mainPath[t.fn] {
			now = append(now, t)
		} else {
			later = append(later, t)
		}
	}
	if len(now) == 0 {
		return all, nil
	}
	return now, later
}

// attachMultiLate links the functions left for later (lateMultiSplit) in
// the background; first is what the start attached, which says so as a
// progressive start does (Main, Rest). Their functions then join
// FuncStats, and fa.Done gets the whole.
func (s *Session) attachMultiLate(late []lateLink, fa *FuncAttach, first *AttachStats) {
	began := time.Now().Add(-first.Elapsed)
	first.Main = first.Attached
	for _, l := range late {
		first.Rest += len(l.targets)
	}
	s.late(func() {
		st := &AttachStats{Backend: fa.Backend, Skipped: map[string][]string{}}
		t := time.Now()
		var links []link.Link
		for _, l := range late {
			if s.lateStop.Load() {
				break
			}
			s.attachMultiTo(s.coll.Programs[l.prog.Name], l.targets, st, &progress{}, l.prog, &links)
		}
		linking := time.Since(t)
		s.addLateLinks(links)
		if s.lateStop.Load() {
			// Tracing ended meanwhile: nobody reads the whole.
			return
		}
		s.statsMu.Lock()
		all := *s.stats
		all.Attached += st.Attached
		all.Elapsed = time.Since(began)
		all.Linking += linking
		all.Skipped = maps.Clone(all.Skipped)
		for r, fns := range st.Skipped {
			all.Skipped[r] = append(all.Skipped[r], fns...)
		}
		s.stats = &all
		s.statsMu.Unlock()
		if fa.Done != nil {
			fa.Done(&all)
		}
	})
}
