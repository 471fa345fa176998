package check

import (
	"strings"
	"sync"

	"github.com/cilium/ebpf/btf"
)

// btfIndex holds what only a walk over all of BTF can find: function and
// tracepoint names for "did you mean" hints, and the named prototypes of
// tracepoint classes. It is built once per spec, on first need.
type btfIndex struct {
	funcs       []string
	tracepoints []string
	classProtos []*btf.FuncProto
}

var indexes sync.Map // *btf.Spec -> *btfIndexOnce

type btfIndexOnce struct {
	once sync.Once
	idx  btfIndex
}

func indexOf(spec *btf.Spec) *btfIndex {
	v, _ := indexes.LoadOrStore(spec, &btfIndexOnce{})
	o := v.(*btfIndexOnce)
	o.once.Do(func() {
		for t, err := range spec.All() {
			if err != nil {
				break
			}
			switch t := t.(type) {
			case *btf.Func:
				o.idx.funcs = append(o.idx.funcs, t.Name)
				if p, ok := t.Type.(*btf.FuncProto); ok && strings.HasPrefix(t.Name, "__bpf_trace_") {
					o.idx.classProtos = append(o.idx.classProtos, p)
				}
			case *btf.Typedef:
				if name, ok := strings.CutPrefix(t.Name, "btf_trace_"); ok {
					o.idx.tracepoints = append(o.idx.tracepoints, name)
				}
			}
		}
	})
	return &o.idx
}
