package session

import (
	"os"

	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/codegen"
)

// switchOff sets the programs' stop gate (codegen.StopMap): from then on
// every program the kernel runs on an event returns at once, though still
// attached. It reports false where some attached program has no gate (one
// at the kernel's limit of maps per program) or the map could not be set:
// the links must then be closed before the output is complete.
func (s *Session) switchOff() bool {
	m := s.coll.Maps[codegen.StopMap]
	if m == nil {
		return len(s.links) == 0
	}
	for _, p := range s.out.Programs {
		if p.Helper == "" && attached(p) && !readsStop(p.Prog.Instructions) {
			return false
		}
	}
	return m.Put(uint32(0), uint32(1)) == nil
}

// attached reports whether the kernel runs a program on events
// (codegen.OnEvents), as opposed to BEGIN, END and interval programs, which
// the runtime runs.
func attached(p *codegen.Program) bool {
	return p.Attach.Kind != 0 && p.Attach.OnEvents()
}

func readsStop(insns asm.Instructions) bool {
	for _, ins := range insns {
		if ins.Reference() == codegen.StopMap {
			return true
		}
	}
	return false
}

// release closes the links, once the output is complete: where closing
// them may be slow (programs on functions, or many links), a helper
// process does it (handoff.go) and this returns at once, unless DetachEnv
// says to wait.
func (s *Session) release() {
	if len(s.links) == 0 {
		return
	}
	if s.slowLinks() && os.Getenv(DetachEnv) != "wait" {
		pid, err := handOff(s.links, s.verbose)
		if err == nil {
			if s.verbose {
				s.warn("detaching %d links in the background (pid %d, %s)", len(s.links), pid, DetachHelperName)
			}
			for _, l := range s.links {
				l.Close()
			}
			s.links = nil
			return
		}
		if s.verbose {
			s.warn("detaching %d links here: no helper (%v)", len(s.links), err)
		}
	}
	closeLinks(s.links, s.progress)
	s.links = nil
}

// slowLinks reports whether closing the links may take long: programs on
// kernel or user functions, or more links than detachWorkers close at once
// twice over.
func (s *Session) slowLinks() bool {
	if s.stats != nil || len(s.links) >= 2*detachWorkers {
		return true
	}
	for _, p := range s.out.Programs {
		if p.Function != "" || p.Attach.Kind == codegen.AttachKprobes || p.Attach.Kind == codegen.AttachSkbFuncs {
			return true
		}
		if p.Helper == "" {
			switch p.Attach.Kind {
			case codegen.AttachKprobe, codegen.AttachFentry, codegen.AttachFexit, codegen.AttachUprobe:
				return true
			}
		}
	}
	return false
}
