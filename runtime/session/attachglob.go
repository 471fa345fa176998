package session

import (
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
)

// attachGlob attaches the program of a kprobe: or kretprobe: glob to its
// functions: all at once with kprobe-multi where it was compiled for it
// (bisecting to skip those that refuse), else a kprobe each. b names the
// backend in the skipped functions' reasons.
func (s *Session) attachGlob(p *codegen.Program, b Backend, st *AttachStats, pr *progress) {
	prog := s.coll.Programs[p.Name]
	a := p.Attach
	try := func(fns []string) (link.Link, error) {
		switch {
		case a.Multi && a.Return:
			return link.KretprobeMulti(prog, link.KprobeMultiOptions{Symbols: fns})
		case a.Multi:
			return link.KprobeMulti(prog, link.KprobeMultiOptions{Symbols: fns})
		case a.Return:
			return link.Kretprobe(fns[0], prog, nil)
		}
		return link.Kprobe(fns[0], prog, nil)
	}
	if a.Multi {
		bisect(a.Funcs, func(part []string) error {
			l, err := try(part)
			if err == nil {
				s.links = append(s.links, l)
				st.Attached += len(part) * p.Probes()
				pr.add(len(part))
			}
			return err
		}, func(fn string, err error) {
			st.skipWith(b, fn, err)
			pr.add(1)
		})
		return
	}
	for _, fn := range a.Funcs {
		l, err := try([]string{fn})
		if err != nil {
			st.skipWith(b, fn, err)
		} else {
			s.links = append(s.links, l)
			st.Attached += p.Probes()
		}
		pr.add(1)
	}
}
