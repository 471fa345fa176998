package session

import (
	"maps"
	"time"

	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
)

// On kprobe-multi, an skb: probe is one program for each place of the skb
// (and the drop reason) among the functions' arguments, each verified on
// its own and attached with one link, one ftrace update: a --filter over
// every function is a dozen of them, five of which hold a packet's main
// path (the skb first, second or third; kfree_skb_reason's and
// sk_skb_reason_drop's reasons). With FuncAttach.LateWork the others,
// some eighty functions that take the skb fourth to ninth, load and attach
// while tracing: their verification and links were most of the start under
// emulation. Detach waits for them (latehelpers.go's late).

// lateVariants names the kprobe-multi programs of skb: probes whose
// functions are none on the packet's main path (mainPath), where fa asks
// for late work; nil where there are none, or where every one is.
func lateVariants(out *codegen.Output, fa *FuncAttach) map[string]bool {
	if fa == nil || !fa.LateWork || fa.Backend != BackendKprobeMulti {
		return nil
	}
	skip := map[string]bool{}
	multi := 0
	for _, p := range out.Programs {
		if p.Helper != "" || p.Attach.Kind != codegen.AttachSkbFuncs || !p.Attach.Multi {
			continue
		}
		multi++
		onMain := false
		for _, fn := range funcTargets(p, fa) {
			if mainPath[fn] {
				onMain = true
				break
			}
		}
		if !onMain {
			skip[p.Name] = true
		}
	}
	if len(skip) == 0 || len(skip) == multi {
		return nil
	}
	return skip
}

// attachVariantsLate loads and attaches progs, kprobe-multi programs left
// out of the start (lateVariants), in the background; first is what the
// start attached, which says so as a progressive start does (Main, Rest).
// Their functions then join FuncStats, and fa.Done gets the whole.
func (s *Session) attachVariantsLate(progs []*codegen.Program, fa *FuncAttach, first *AttachStats) {
	began := time.Now().Add(-first.Elapsed)
	first.Main = first.Attached
	for _, p := range progs {
		first.Rest += len(funcTargets(p, fa))
	}
	s.late(func() {
		st := &AttachStats{Backend: fa.Backend, Skipped: map[string][]string{}}
		var links []link.Link
		for _, p := range progs {
			fns := funcTargets(p, fa)
			prog, err := LoadShared(s.coll, p)
			if err != nil && len(p.Merged) > 0 && verifierRefused(err) {
				// As at the start (LoadWith): the verifier may refuse
				// a merged program where it takes each probe's own.
				for _, m := range p.Unmerge() {
					if mp, merr := LoadShared(s.coll, m); merr == nil {
						s.attachMultiTo(mp, fns, st, &progress{}, m, &links)
						mp.Close()
					}
				}
				continue
			}
			if err != nil {
				for _, fn := range fns {
					st.skip(fn, err)
				}
				continue
			}
			s.attachMultiTo(prog, fns, st, &progress{}, p, &links)
			prog.Close()
		}
		s.addLateLinks(links)
		s.statsMu.Lock()
		all := *s.stats
		all.Attached += st.Attached
		all.Elapsed = time.Since(began)
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
