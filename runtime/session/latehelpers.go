package session

import (
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
)

// Where skb: probes attach to functions (FuncAttach.LateWork: not for -c's
// command, nor with --progressive=false), track()'s helpers on BPF
// trampolines (fexit on the copy functions, fentry and fexit on where
// packets are cut or merged, fentry on the frees: a --filter has some
// twenty) attach while tracing, after the "tracing" line: each trampoline
// costs an ftrace update of its own (some 35 ms under the VM suite's
// emulation, most of a second for twenty, against a kprobe-multi link's
// one update for every function). What they do is follow a traced skb
// into its copies and pieces, and forget it where it is freed past the
// free tracepoints; until they are attached, a packet copied or cut is
// followed where the filter matches it, as on a kernel that refuses them,
// and a freed skb is forgotten at the free tracepoints, whose helpers
// (tp_btf: no trampoline) attach before. Detach waits for them.

// notOnTrampoline reports whether a helper attaches elsewhere than on a
// BPF trampoline (a tp_btf on a tracepoint).
func notOnTrampoline(p *codegen.Program) bool { return !onTrampoline(p) }

// onTrampoline reports whether a helper is an fentry or fexit program.
func onTrampoline(p *codegen.Program) bool {
	return p.Prog.AttachType == ebpf.AttachTraceFEntry || p.Prog.AttachType == ebpf.AttachTraceFExit
}

// attachHelpersLate attaches the helpers on trampolines in the
// background, behind the attach gate (gate.go); waitLate waits for it.
// Once tracing ends, those not yet attached are left.
func (s *Session) attachHelpersLate(warn func(string, ...any)) {
	s.late(func() {
		start := time.Now()
		var links []link.Link
		n := s.attachHelpers(warn, func(p *codegen.Program) bool { return onTrampoline(p) && !s.lateStop.Load() }, false, &links)
		s.addLateLinks(links)
		if s.verbose && n > 0 {
			warn("track(): %d helpers on trampolines attached while tracing, in %v", n, time.Since(start).Round(time.Millisecond))
		}
	})
}

// late runs work in the background, behind the attach gate; waitLate
// waits for every such work. Work not begun when tracing ends (lateStop)
// is left: a run stopped soon after its start (a restart, the usual
// debugging loop) neither waits for links it no longer needs nor leaves
// them to its detach helper, whose closes the next start would wait
// behind (gate.go).
func (s *Session) late(work func()) {
	s.lateWG.Add(1)
	go func() {
		defer s.lateWG.Done()
		release := holdAttachGate()
		defer release()
		if !s.lateStop.Load() {
			work()
		}
	}()
}

// addLateLinks keeps links attached in the background.
func (s *Session) addLateLinks(links []link.Link) {
	s.lateMu.Lock()
	s.lateLinks = append(s.lateLinks, links...)
	s.lateMu.Unlock()
}

// waitLate ends the work attaching while tracing, if any: what is under
// way finishes, the rest is left; it then takes its links.
func (s *Session) waitLate() {
	s.lateStop.Store(true)
	s.lateWG.Wait()
	s.lateMu.Lock()
	s.links = append(s.links, s.lateLinks...)
	s.lateLinks = nil
	s.lateMu.Unlock()
}
