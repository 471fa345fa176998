package check

import (
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
)

// has(args.NAME) is decided when the script is compiled: it holds when
// every probe of the list has an argument NAME on this kernel (a raw
// argument or a format field of a tracepoint, a parameter of a function).
// It is only the condition of an if, possibly negated: the branch it rules
// out is dropped before the probe is checked, so that branch may read what
// this kernel does not have. A script then runs on kernels with and without
// an argument: `if (has(args.reason)) { $r = args.reason } else { $r = 0 }`.

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
	}
	return s
}

// hasCond evaluates `has(args.NAME)` and `!has(args.NAME)`; ok is false for
// any other condition.
func (c *checker) hasCond(p *lang.Probe, e lang.Expr) (v, ok bool) {
	if u, isNot := e.(*lang.UnaryExpr); isNot && u.Op == "!" {
		v, ok := c.hasCond(p, u.X)
		return !v, ok
	}
	call, isCall := e.(*lang.CallExpr)
	if !isCall || call.Name != "has" || len(call.Args) != 1 {
		return false, false
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
