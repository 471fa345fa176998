package session

import (
	"path"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/runtime/kernel"
)

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
	var all []codegen.SkbTarget
	for _, tp := range kernel.SkbTracepoints(spec, kernel.Kallsyms()) {
		all = append(all, codegen.SkbTarget{Name: tp.Name, SkbArg: tp.SkbArg, HasReason: tp.HasReason, ReasonArg: tp.ReasonArg, FuncAddr: tp.FuncAddr})
	}
	out := map[string][]codegen.SkbTarget{}
	for g := range globs {
		out[g] = MatchTargets(all, g)
		for i := range out[g] {
			out[g][i].Category = kernel.TracepointCategory(out[g][i].Name)
		}
	}
	return out
}
