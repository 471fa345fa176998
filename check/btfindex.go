package check

import (
	"strings"
	"sync"

	"github.com/cilium/ebpf/btf"
)

// btfIndex holds what only a walk over all of BTF can find: function and
// tracepoint names for "did you mean" hints, and the named prototypes of
// tracepoint classes. It is built once per spec, on first need; it is empty
// where the checker has only some of the types (wholeSpec).
type btfIndex struct {
	funcs       []string
	tracepoints []string
	classProtos []*btf.FuncProto
	// classes are the __bpf_trace_CLASS prototypes by class name.
	classes map[string]*btf.FuncProto
	structs []string
	// rawEvents are the trace_event_raw_CLASS structs: the record layouts
	// of classic tracepoints.
	rawEvents []*btf.Struct
	// enumerators are the values of every BTF enum by name, as C sees
	// them: SKB_DROP_REASON_NO_SOCKET, TCP_CLOSE.
	enumerators map[string]enumerator
}

type enumerator struct {
	value uint64
	enum  *btf.Enum
}

func (x *btfIndex) structNames() []string { return x.structs }

var indexes sync.Map // *btf.Spec -> *btfIndexOnce

type btfIndexOnce struct {
	once sync.Once
	idx  btfIndex
}

func indexOf(b BTF) *btfIndex {
	spec := wholeSpec(b)
	if spec == nil {
		return &btfIndex{}
	}
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
					if o.idx.classes == nil {
						o.idx.classes = map[string]*btf.FuncProto{}
					}
					o.idx.classes[strings.TrimPrefix(t.Name, "__bpf_trace_")] = p
				}
			case *btf.Enum:
				if o.idx.enumerators == nil {
					o.idx.enumerators = map[string]enumerator{}
				}
				for _, v := range t.Values {
					if _, dup := o.idx.enumerators[v.Name]; !dup {
						o.idx.enumerators[v.Name] = enumerator{v.Value, t}
					}
				}
			case *btf.Struct:
				if t.Name != "" {
					o.idx.structs = append(o.idx.structs, t.Name)
				}
				if strings.HasPrefix(t.Name, "trace_event_raw_") {
					o.idx.rawEvents = append(o.idx.rawEvents, t)
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
