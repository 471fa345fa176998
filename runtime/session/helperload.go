package session

import (
	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/codegen"
)

// loadHelper loads one of track()'s or --sample's helpers after the rest:
// by its target's type ID where this kernel's BTF cache holds it (the
// helpers of a --filter are some twenty fentry, fexit and tp_btf programs,
// and cilium/ebpf would decode the kernel's whole BTF to find their
// targets), else as LoadShared does.
func (s *Session) loadHelper(p *codegen.Program) (*ebpf.Program, error) {
	if s.ids != nil {
		if prog, err := loadByKernelTypeID(p, s.coll.Maps, s.ids); err == nil {
			return prog, nil
		}
	}
	return LoadShared(s.coll, p)
}

// maxCachedTargets bounds the targets TracingTargets names: the fentry
// backend's one program per function would fill the BTF cache, and its
// loads decode the whole BTF anyway.
const maxCachedTargets = 64

// TracingTargets names the BTF types that loading out's helpers and its
// other tracing programs looks up in the kernel's BTF (a function's, or a
// tracepoint's btf_trace_ typedef), skb: programs on the fentry backend
// aside: the names the BTF cache should hold for the next run's load to
// decode no BTF. nil where they are more than maxCachedTargets.
func TracingTargets(out *codegen.Output) []string {
	var names []string
	for _, p := range out.Programs {
		if p.Attach.Kind == codegen.AttachSkbFuncs && p.Helper == "" {
			continue
		}
		if name, _, ok := targetType(p.Prog); ok {
			names = append(names, name)
		}
	}
	if len(names) > maxCachedTargets {
		return nil
	}
	return names
}
