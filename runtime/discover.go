package runtime

import (
	"path"
	"sort"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
)

// SkbTracepoints lists the tracepoints whose tp_btf prototype carries a
// struct sk_buff *, with the skb's argument position, sorted by name. It is
// the fallback for skb: probes on kernels where no function backend works.
func SkbTracepoints(spec *btf.Spec) []codegen.SkbTarget {
	var out []codegen.SkbTarget
	for t, err := range spec.All() {
		if err != nil {
			break
		}
		td, ok := t.(*btf.Typedef)
		if !ok || !strings.HasPrefix(td.Name, "btf_trace_") {
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
		for i, p := range proto.Params {
			if i > 0 && check.IsSkbPtr(p.Type) {
				out = append(out, codegen.SkbTarget{Name: strings.TrimPrefix(td.Name, "btf_trace_"), SkbArg: i - 1})
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
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

// traceiterAddrs fills each target's FuncAddr with the address of the
// kernel's __traceiter_NAME, so that `func` names the tracepoint.
func (k *ksyms) traceiterAddrs(targets []codegen.SkbTarget) {
	k.once.Do(k.load)
	addr := map[string]uint64{}
	for i, n := range k.names {
		if name, ok := strings.CutPrefix(n, "__traceiter_"); ok {
			addr[name] = k.addrs[i]
		}
	}
	for i := range targets {
		targets[i].FuncAddr = addr[targets[i].Name]
	}
}

// ResolveSkbFallback returns, for each skb: spec of the script, the
// tracepoints it falls back to, with their __traceiter_ addresses.
func ResolveSkbFallback(spec *btf.Spec, globs map[string]bool) map[string][]codegen.SkbTarget {
	all := SkbTracepoints(spec)
	var k ksyms
	k.traceiterAddrs(all)
	out := map[string][]codegen.SkbTarget{}
	for g := range globs {
		out[g] = MatchTargets(all, g)
	}
	return out
}
