package runtime

import (
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
)

// SkbTracepoints lists the tracepoints whose tp_btf prototype carries a
// struct sk_buff *, with the skb's argument position, sorted by name. It is
// the fallback for skb: probes on kernels where no function backend works.
// The candidates are kallsyms' __traceiter_NAME symbols, each looked up by
// name in BTF: decoding all of BTF instead costs 0.3 s and 50 MB.
func SkbTracepoints(spec *btf.Spec, k *ksyms) []codegen.SkbTarget {
	k.once.Do(k.load)
	var out []codegen.SkbTarget
	for i, n := range k.names {
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
		tg := codegen.SkbTarget{Name: name, SkbArg: -1, FuncAddr: k.addrs[i]}
		for j, p := range proto.Params {
			switch {
			case j == 0: // the tracepoint's context
			case tg.SkbArg < 0 && check.IsSkbPtr(p.Type):
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

// isDropReason reports whether a BTF type is enum skb_drop_reason.
func isDropReason(t btf.Type) bool {
	e, ok := btf.UnderlyingType(t).(*btf.Enum)
	return ok && e.Name == "skb_drop_reason"
}

// MatchTargets keeps the targets whose name matches the glob.
func MatchTargets(targets []codegen.SkbTarget, glob string) []codegen.SkbTarget {
	var out []codegen.SkbTarget
	for _, t := range targets {
		if ok, _ := path.Match(glob, t.Name); ok {
			out = append(out, t)
		}
	}
	return out
}

// ResolveSkbFallback returns, for each skb: spec of the script, the
// tracepoints it falls back to, with their __traceiter_ addresses.
func ResolveSkbFallback(spec *btf.Spec, globs map[string]bool) map[string][]codegen.SkbTarget {
	all := SkbTracepoints(spec, &kernelSyms)
	out := map[string][]codegen.SkbTarget{}
	for g := range globs {
		out[g] = MatchTargets(all, g)
		for i := range out[g] {
			out[g][i].Category = tracepointCategory(out[g][i].Name)
		}
	}
	return out
}

// tracepointCategory is the tracefs category of a tracepoint, "" where
// tracefs is not mounted (it is not mounted for this) or lacks it.
func tracepointCategory(name string) string {
	for _, d := range tracefsDirs {
		if m, _ := filepath.Glob(filepath.Join(d, "events", "*", name)); len(m) > 0 {
			return filepath.Base(filepath.Dir(m[0]))
		}
	}
	return ""
}
