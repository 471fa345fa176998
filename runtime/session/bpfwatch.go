package session

import (
	"errors"
	"os"
	"time"

	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// BPFPollInterval is how often a session whose bpf: probes take programs
// loaded while tracing lists the loaded programs.
const BPFPollInterval = time.Second

// watchBPF lists the loaded packet programs every BPFPollInterval until
// Detach, and attaches the script's bpf: and bpfret: probes to each one
// loaded since that they take (codegen's Output.CompileLate), saying so on
// stderr, or why not. known are the programs there when tracing started.
// A program that goes away leaves its links to be closed as any other.
func (s *Session) watchBPF(known map[uint32]bool) {
	s.every(BPFPollInterval, func() bool {
		progs, err := kernel.PacketProgs()
		if err != nil {
			return false
		}
		for _, pp := range progs {
			if known[pp.ID] {
				continue
			}
			known[pp.ID] = true
			if s.attachLate(pp) {
				s.warn("fentry on BPF programs is refused here: programs loaded from now on are not traced")
				return true
			}
		}
		return false
	})
}

// attachLate compiles, loads and attaches the probes that take a program
// loaded while tracing. It reports whether the kernel refused fentry on
// it (EPERM): it will refuse the next ones too.
func (s *Session) attachLate(bp kernel.PacketProg) (refused bool) {
	late, err := s.out.CompileLate(bp.ID, bp.Name, bp.Type, bp.Func)
	if err != nil {
		s.warn("%s program %s (id %d), loaded while tracing, is not traced: %v", bp.Type, bp.Name, bp.ID, err)
		return false
	}
	if len(late.Programs) == 0 {
		return false
	}
	s.lateEv.Add(late)
	var links []link.Link
	for _, p := range late.Programs {
		l, err := s.attachBPFProg(p)
		if errors.Is(err, errProgGone) {
			break // gone already: nothing to trace
		}
		if err != nil {
			s.warn("%s: %s program %s (id %d), loaded while tracing, is not traced: %v", p.Attach.Text, bp.Type, bp.Name, bp.ID, err)
			if errors.Is(err, os.ErrPermission) {
				refused = true
				break
			}
			continue
		}
		links = append(links, l)
		s.warn("%s: tracing %s program %s (id %d), loaded while tracing", p.Attach.Text, bp.Type, bp.Name, bp.ID)
	}
	s.links = append(s.links, links...)
	return refused
}
