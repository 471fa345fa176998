package check

import (
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
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
// predicate (or the first operands of its &&): the branch it rules out is
// dropped before the probe is checked, and a probe whose predicate it
// rules out is dropped whole (not checked, not attached). So one script
// runs on kernels with and without an argument or a tracepoint:
// `if (has(args.reason)) { ... } else { ... }`, or a probe on a function
// with the predicate /!has("tracepoint:sock:sk_data_ready")/ beside one on
// that tracepoint with /has("tracepoint:sock:sk_data_ready")/.

// pruneProbes drops the probes whose predicate has() rules out, and takes
// the has() out of the predicates of the others.
func (c *checker) pruneProbes(probes []*lang.Probe) []*lang.Probe {
	var kept []*lang.Probe
	for _, p := range probes {
		if p.Pred != nil {
			pred, keep := c.prunePred(p, p.Pred)
			if !keep {
				continue
			}
			p.Pred = pred
		}
		kept = append(kept, p)
	}
	return kept
}

// prunePred evaluates the has() of a predicate and of the operands of its
// &&: keep is false when one is false; pred is what remains (nil: nothing).
func (c *checker) prunePred(p *lang.Probe, e lang.Expr) (pred lang.Expr, keep bool) {
	if v, ok := c.hasCond(p, e); ok {
		return nil, v
	}
	b, ok := e.(*lang.BinaryExpr)
	if !ok || b.Op != "&&" {
		return e, true
	}
	x, keep := c.prunePred(p, b.X)
	if !keep {
		return nil, false
	}
	y, keep := c.prunePred(p, b.Y)
	if !keep {
		return nil, false
	}
	switch {
	case x == nil:
		return y, true
	case y == nil:
		return x, true
	}
	b.X, b.Y = x, y
	return b, true
}

// pruneHas replaces every `if (has(args.NAME))` of a probe's body with the
// branch this kernel takes.
func (c *checker) pruneHas(p *lang.Probe) {
	c.pruneBlock(p, p.Body)
}

func (c *checker) pruneBlock(p *lang.Probe, b *lang.Block) {
	for i, s := range b.Stmts {
		b.Stmts[i] = c.pruneStmt(p, s)
	}
}

func (c *checker) pruneStmt(p *lang.Probe, s lang.Stmt) lang.Stmt {
	switch s := s.(type) {
	case *lang.Block:
		c.pruneBlock(p, s)
	case *lang.IfStmt:
		if v, ok := c.hasCond(p, s.Cond); ok {
			if v {
				c.pruneBlock(p, s.Then)
				return s.Then
			}
			if s.Else == nil {
				return &lang.Block{At: s.At}
			}
			return c.pruneStmt(p, s.Else)
		}
		c.pruneBlock(p, s.Then)
		if s.Else != nil {
			s.Else = c.pruneStmt(p, s.Else)
		}
	case *lang.ForStmt:
		c.pruneBlock(p, s.Body)
	case *lang.WhileStmt:
		c.pruneBlock(p, s.Body)
	case *lang.UnrollStmt:
		c.pruneBlock(p, s.Body)
	}
	return s
}

// hasCond evaluates `has(...)` and `!has(...)`; ok is false for any other
// condition.
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
	for _, s := range p.Specs {
		if !c.specHasArg(s, f.Name) {
			return false, true
		}
	}
	return len(p.Specs) > 0, true
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
