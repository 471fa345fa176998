package kernel

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// SkbTracepoint is a tracepoint whose tp_btf prototype carries a struct
// sk_buff *.
type SkbTracepoint struct {
	Name string
	// SkbArg is the skb's position among the tracepoint's arguments (its
	// context, the prototype's first parameter, not counted).
	SkbArg int
	// HasReason says argument ReasonArg is the drop reason (enum
	// skb_drop_reason).
	HasReason bool
	ReasonArg int
	// FuncAddr is the address of the kernel's __traceiter_NAME.
	FuncAddr uint64
}

// SkbTracepoints lists the tracepoints whose tp_btf prototype carries a
// struct sk_buff *, with the skb's argument position, sorted by name. It is
// the fallback for skb: probes on kernels where no function backend works.
// The candidates are the __traceiter_NAME symbols of syms (Kallsyms()),
// each looked up by name in BTF: decoding all of BTF instead costs 0.3 s
// and 50 MB.
func SkbTracepoints(spec *btf.Spec, syms *Symbols) []SkbTracepoint {
	syms.once.Do(syms.load)
	var out []SkbTracepoint
	for i, n := range syms.names {
		name, ok := strings.CutPrefix(n, "__traceiter_")
		if !ok {
			continue
		}
		var td *btf.Typedef
		if spec.TypeByName("btf_trace_"+name, &td) != nil {
			continue
		}
		ptr, ok := btf.UnderlyingType(td.Type).(*btf.Pointer)
		if !ok {
			continue
		}
		proto, ok := ptr.Target.(*btf.FuncProto)
		if !ok {
			continue
		}
		tg := SkbTracepoint{Name: name, SkbArg: -1, FuncAddr: syms.addrs[i]}
		for j, p := range proto.Params {
			switch {
			case j == 0: // the tracepoint's context
			case tg.SkbArg < 0 && isSkbPtr(p.Type):
				tg.SkbArg = j - 1
			case !tg.HasReason && isDropReason(p.Type):
				tg.HasReason, tg.ReasonArg = true, j-1
			}
		}
		if tg.SkbArg >= 0 {
			out = append(out, tg)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// isSkbPtr reports whether a BTF type is a struct sk_buff *, through
// typedefs and qualifiers (as check.IsSkbPtr, which the checker asks).
func isSkbPtr(t btf.Type) bool {
	p, ok := btf.UnderlyingType(t).(*btf.Pointer)
	if !ok {
		return false
	}
	s, ok := btf.UnderlyingType(p.Target).(*btf.Struct)
	return ok && s.Name == "sk_buff"
}

// isDropReason reports whether a BTF type is enum skb_drop_reason.
func isDropReason(t btf.Type) bool {
	e, ok := btf.UnderlyingType(t).(*btf.Enum)
	return ok && e.Name == "skb_drop_reason"
}

// TracepointCategory is the tracefs category of a tracepoint, "" where
// tracefs is not mounted (it is not mounted for this) or lacks it.
func TracepointCategory(name string) string {
	for _, d := range tracefsDirs {
		if m, _ := filepath.Glob(filepath.Join(d, "events", "*", name)); len(m) > 0 {
			return filepath.Base(filepath.Dir(m[0]))
		}
	}
	return ""
}
