package check

import "github.com/skbtrace/skbtrace/lang"

// LoadsByKernelTypeID reports whether a script surely has a program that the
// kernel loads by a type ID of its BTF, decided from the script's syntax
// before it is checked: a tp_btf, fentry or fexit program (cilium/ebpf finds
// the target's ID in the kernel's whole BTF), or an skb: probe (its
// functions and tracepoints come from the whole BTF too). A tracepoint is
// read by its raw arguments (tp_btf) where the probe reads an skb field, a
// drop reason or argN, or names no args.NAME; one that names args fields
// may be read by its format (wantsRecord), which only the check can tell:
// false there. A wrong answer costs time, never a different result.
func LoadsByKernelTypeID(s *lang.Script) bool {
	for _, p := range s.Probes {
		use := scanArgs(p)
		for _, sp := range p.Specs {
			switch sp.Kind {
			case lang.ProbeFentry, lang.ProbeFexit, lang.ProbeSkb, lang.ProbeSkbRet:
				return true
			case lang.ProbeTracepoint:
				if use.rawOnly || len(use.names) == 0 {
					return true
				}
			}
		}
	}
	return false
}
