package runtime

import (
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang"
)

// attachGlob attaches the program of a kprobe: or kretprobe: glob to its
// functions: all at once with kprobe-multi (bisecting to skip those that
// refuse), else a kprobe each.
func (s *Session) attachGlob(p *codegen.Program, b Backend, st *AttachStats, pr *progress) {
	prog := s.coll.Programs[p.Name]
	ret := p.Spec.Spec.Kind == lang.ProbeKretprobe
	try := func(fns []string) (link.Link, error) {
		switch {
		case b == BackendKprobeMulti && ret:
			return link.KretprobeMulti(prog, link.KprobeMultiOptions{Symbols: fns})
		case b == BackendKprobeMulti:
			return link.KprobeMulti(prog, link.KprobeMultiOptions{Symbols: fns})
		case ret:
			return link.Kretprobe(fns[0], prog, nil)
		}
		return link.Kprobe(fns[0], prog, nil)
	}
	if b == BackendKprobeMulti {
		bisect(p.Functions, func(part []string) error {
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
	for _, fn := range p.Functions {
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
