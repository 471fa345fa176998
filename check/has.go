package check

import (
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/passes"
)

// has() is decided when the script is compiled:
//
//   - has(args.NAME) holds when every probe of the list has an argument NAME
//     on this kernel (a raw argument or a format field of a tracepoint, a
//     parameter of a function);
//   - has("tracepoint:CAT:NAME"), has("fentry:FN") (kprobe, kretprobe,
//     fexit) hold when this kernel has that tracepoint or function.
//
// It is only the condition of an if, possibly negated, or a probe's
// predicate (or the first operands of its &&): the checker records its
// answer (Info.Has) and checks only what it keeps, the branch taken and
// the probes it does not rule out; Prune then drops the rest (a probe
// whose predicate has() rules out is not checked, not attached). So one
// script runs on kernels with and without an argument or a tracepoint:
// `if (has(args.reason)) { ... } else { ... }`, or a probe on a function
// with the predicate /!has("tracepoint:sock:sk_data_ready")/ beside one on
// that tracepoint with /has("tracepoint:sock:sk_data_ready")/.

// liveProbe is a probe has() keeps and the predicate it leaves (nil: none).
type liveProbe struct {
	probe *lang.Probe
	pred  lang.Expr
}

// liveProbes decides the has() of the probes' predicates and returns the
// probes they keep, each with what remains of its predicate: the
// predicate as passes.PruneHas leaves it, which is what is checked.
func (c *checker) liveProbes(probes []*lang.Probe) []liveProbe {
	var kept []liveProbe
	for _, p := range probes {
		pred, keep := p.Pred, true
		if pred != nil {
			pred, keep = passes.PrunePred(pred, func(e lang.Expr) (bool, bool) { return c.hasCond(p, e) })
		}
		if keep {
			kept = append(kept, liveProbe{p, pred})
		}
	}
	return kept
}

// hasCond evaluates `has(...)` and `!has(...)` in probe p, once each:
// the answer is recorded in Info.Has. ok is false for any other condition.
func (c *checker) hasCond(p *lang.Probe, e lang.Expr) (v, ok bool) {
	if u, isNot := e.(*lang.UnaryExpr); isNot && u.Op == "!" {
		v, ok := c.hasCond(p, u.X)
		return !v, ok
	}
	if pe, isParen := e.(*lang.ParenExpr); isParen {
		return c.hasCond(p, pe.X)
	}
	call, isCall := e.(*lang.CallExpr)
	if !isCall || call.Name != "has" || len(call.Args) != 1 {
		return false, false
	}
	if v, seen := c.info.Has[call]; seen {
		return v, true
	}
	v, ok = c.hasAnswer(p, call)
	if ok {
		c.info.Has[call] = v
	}
	return v, ok
}

// hasAnswer evaluates one has() call of probe p.
func (c *checker) hasAnswer(p *lang.Probe, call *lang.CallExpr) (v, ok bool) {
	if str, isStr := call.Args[0].(*lang.StrLit); isStr {
		return c.hasProbe(str), true
	}
	f, isField := call.Args[0].(*lang.FieldExpr)
	if !isField {
		return false, false
	}
	if id, isArgs := f.X.(*lang.Ident); !isArgs || id.Name != "args" {
		return false, false
	}
	specs := c.liveSpecs(p)
	for _, s := range specs {
		if !c.specHasArg(s, f.Name) {
			return false, true
		}
	}
	return len(specs) > 0, true
}

// specHasArg reports whether a probe spec has an argument called name.
func (c *checker) specHasArg(s *lang.ProbeSpec, name string) bool {
	switch s.Kind {
	case lang.ProbeKprobe, lang.ProbeFentry, lang.ProbeFexit:
		var fn *btf.Func
		if c.opts.BTF.TypeByName(s.Target, &fn) != nil {
			return false
		}
		proto, _ := fn.Type.(*btf.FuncProto)
		return proto != nil && hasParam(proto, name, 0)
	case lang.ProbeTracepoint:
		var td *btf.Typedef
		if c.opts.BTF.TypeByName("btf_trace_"+s.Name, &td) == nil {
			if ptr, _ := btf.UnderlyingType(td.Type).(*btf.Pointer); ptr != nil {
				proto, _ := ptr.Target.(*btf.FuncProto)
				if proto = c.namedTracepointProto(s.Name, proto); proto != nil && hasParam(proto, name, 1) {
					return true
				}
			}
		}
		if raw := c.rawEventStruct(s.Name, nil); raw != nil {
			_, _, ok := FindMember(raw, name)
			return ok
		}
	}
	return false
}

func hasParam(proto *btf.FuncProto, name string, skip int) bool {
	for i, p := range proto.Params {
		if i >= skip && p.Name == name {
			return true
		}
	}
	return false
}

// hasProbe reports whether this kernel has the probe a has("...") names.
func (c *checker) hasProbe(str *lang.StrLit) bool {
	kind, rest, _ := strings.Cut(str.Value, ":")
	switch kind {
	case "tracepoint", "t":
		cat, name, ok := strings.Cut(rest, ":")
		if !ok || name == "" {
			break
		}
		if c.opts.TracepointExists != nil && cat != "*" {
			return c.opts.TracepointExists(cat, name)
		}
		var td *btf.Typedef
		return c.opts.BTF.TypeByName("btf_trace_"+name, &td) == nil || c.rawEventStruct(name, nil) != nil
	case "kprobe", "k", "kretprobe", "kr", "fentry", "f", "fexit", "fr", "kfunc", "kretfunc":
		var fn *btf.Func
		return rest != "" && c.opts.BTF.TypeByName(rest, &fn) == nil
	}
	c.errorf(str, `e.g. has("tracepoint:sock:sk_data_ready") or has("fentry:tcp_v4_syn_recv_sock")`,
		"has(%q): name a tracepoint or a kernel function probe", str.Value)
	return false
}
