package session

import (
	"errors"

	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
)

// attachUnsample attaches --sample's helpers that forget a freed skb: the
// fexit ones at the end of its life where the kernel takes them, else
// those on the free tracepoints, which come before its last functions (a
// function backend's hops after them are decided anew: said once).
func (s *Session) attachUnsample(warn func(string, ...any)) {
	attachKind := func(kind string) (n int, err error) {
		for _, p := range s.out.Programs {
			if p.Helper != kind {
				continue
			}
			prog, lerr := s.loadHelper(p)
			var l link.Link
			if lerr == nil {
				l, lerr = link.AttachTracing(link.TracingOptions{Program: prog, AttachType: p.Prog.AttachType})
				prog.Close()
			}
			if lerr != nil {
				err = errors.Join(err, lerr)
				continue
			}
			s.links = append(s.links, l)
			n++
		}
		return n, err
	}
	ends, endErr := attachKind(codegen.HelperUnsample)
	if ends > 0 {
		return
	}
	n, err := attachKind(codegen.HelperUnsampleFree)
	switch {
	case endErr == nil:
		// No helper at all: no --sample gate.
	case n == 0:
		warn("--sample: cannot watch skbs being freed (%v); a new skb at a freed one's address keeps the decision made for the last", errors.Join(endErr, err))
	case s.stats != nil && s.stats.Backend != "":
		warn("--sample: skbs are forgotten at the free tracepoints (fexit refused: %v): their hops after them are decided anew", endErr)
	}
}
