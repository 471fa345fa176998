package lang

import "fmt"

// desugar rewrites, in place, what bpftrace 0.26 writes inside
// expressions into statements the checker and code generator know:
//
//   - a block expression `{ s1; s2; v }` runs its statements before the
//     statement it is in, and is its value v there;
//   - `x++`, `++x` (and --) are `x += 1` before the statement, the
//     expression x (for ++x) or a variable holding x's old value (x++);
//   - where one of these sits in a branch that may not run (`c ? a : b`,
//     `a && b`, `a || b`; an if expression is a ?:), the branches become
//     an if statement that assigns a variable, and the variable is the
//     value;
//   - `c ? a : b` as a statement is `if (c) { a } else { b }`, a block
//     expression as a statement a block.
//
// A predicate holding one becomes the action's first if. A while loop's
// condition holding one is an error: it is evaluated every turn.
// Variables made here are named $__sugarN, which no script can write
// before (a name bpftrace leaves to it).
type desugarer struct {
	d *Diagnostics
	n int
}

// desugar rewrites the script's probes.
func desugar(s *Script, d *Diagnostics) {
	ds := &desugarer{d: d}
	for _, p := range s.Probes {
		if p.Pred != nil && hasSugar(p.Pred) {
			pre, pred := ds.hoist(p.Pred)
			cond := &IfStmt{At: p.Body.At, Cond: pred, Then: p.Body}
			p.Body = &Block{At: p.Body.At, Angle: p.Body.Angle, Stmts: append(pre, cond)}
			p.Pred = nil
		}
		ds.block(p.Body)
	}
}

// hasSugar reports whether a node holds what desugar rewrites.
func hasSugar(n Node) bool {
	found := false
	Inspect(n, func(n Node) bool {
		switch n.(type) {
		case *BlockExpr, *IncDecExpr:
			found = true
		}
		return !found
	})
	return found
}

func (ds *desugarer) temp(at Span) *VarExpr {
	ds.n++
	return &VarExpr{At: at, Name: fmt.Sprintf("__sugar%d", ds.n)}
}

func (ds *desugarer) block(b *Block) {
	if b != nil {
		b.Stmts = ds.stmts(b.Stmts)
	}
}

func (ds *desugarer) stmts(in []Stmt) []Stmt {
	var out []Stmt
	for _, s := range in {
		out = append(out, ds.stmt(s)...)
	}
	return out
}

// stmt returns the statements that s is.
func (ds *desugarer) stmt(s Stmt) []Stmt {
	switch s := s.(type) {
	case *ExprStmt:
		switch x := Unparen(s.X).(type) {
		case *BlockExpr:
			stmts := ds.stmts(x.Stmts)
			if x.Value != nil && !pure(x.Value) {
				// A block's value dropped: bpftrace warns, and runs what
				// has an effect (a macro's `x;` of a call).
				stmts = append(stmts, ds.stmt(&ExprStmt{At: x.Value.Span(), X: x.Value})...)
			}
			return []Stmt{&Block{At: x.At, Stmts: withoutPure(stmts)}}
		case *IncDecExpr:
			return ds.stmt(incAssign(x))
		case *CondExpr:
			if s.X == x || hasSugar(x) {
				then := &Block{At: x.Then.Span(), Stmts: []Stmt{&ExprStmt{At: x.Then.Span(), X: x.Then}}}
				els := &Block{At: x.Else.Span(), Stmts: []Stmt{&ExprStmt{At: x.Else.Span(), X: x.Else}}}
				return ds.stmt(&IfStmt{At: s.At, Cond: x.Cond, Then: then, Else: els})
			}
		}
		pre, x := ds.hoist(s.X)
		s.X = x
		return append(pre, s)
	case *AssignStmt:
		pre, v := ds.hoist(s.Value)
		s.Value = v
		if m, ok := s.Target.(*MapExpr); ok {
			pre = append(pre, ds.hoistList(m.Keys)...)
		}
		return append(pre, s)
	case *LetStmt:
		if s.Value == nil {
			return []Stmt{s}
		}
		pre, v := ds.hoist(s.Value)
		s.Value = v
		return append(pre, s)
	case *IfStmt:
		pre, c := ds.hoist(s.Cond)
		s.Cond = c
		ds.block(s.Then)
		switch e := s.Else.(type) {
		case *Block:
			ds.block(e)
		case *IfStmt:
			if out := ds.stmt(e); len(out) != 1 || out[0] != Stmt(e) {
				s.Else = &Block{At: e.At, Stmts: out}
			}
		}
		return append(pre, s)
	case *Block:
		ds.block(s)
	case *WhileStmt:
		if hasSugar(s.Cond) {
			ds.d.Add(s.Cond.Span(), "compute the condition in the loop: while (1) { ...; if (!c) { break } }",
				"a block expression or ++/-- in a while condition is not supported")
		}
		ds.block(s.Body)
	case *ForStmt:
		var pre []Stmt
		if s.Start != nil {
			var p1, p2 []Stmt
			p1, s.Start = ds.hoist(s.Start)
			p2, s.End = ds.hoist(s.End)
			pre = append(p1, p2...)
		}
		ds.block(s.Body)
		return append(pre, s)
	case *UnrollStmt:
		ds.block(s.Body)
	}
	return []Stmt{s}
}

// incAssign is `x op= 1` for x++ or x--.
func incAssign(x *IncDecExpr) *AssignStmt {
	op := "+="
	if x.Op == "--" {
		op = "-="
	}
	end := x.At.End
	return &AssignStmt{At: x.At, Target: x.X, Op: op, Value: &IntLit{At: Span{Start: end, End: end}, Value: 1}}
}

// hoistList hoists each expression of a list in place, returning what
// runs before.
func (ds *desugarer) hoistList(es []Expr) []Stmt {
	var pre []Stmt
	for i, e := range es {
		var p []Stmt
		p, es[i] = ds.hoist(e)
		pre = append(pre, p...)
	}
	return pre
}

// hoist returns the statements to run before an expression and what
// stands for it after them.
func (ds *desugarer) hoist(e Expr) ([]Stmt, Expr) {
	if e == nil || !hasSugar(e) {
		return nil, e
	}
	switch x := e.(type) {
	case *BlockExpr:
		pre := ds.stmts(x.Stmts)
		if x.Value == nil {
			ds.d.Add(x.At, "end the block with its value and no ;: { ...; $x + 1 }", "this block has no value")
			return pre, &IntLit{At: x.At}
		}
		p, v := ds.hoist(x.Value)
		return append(pre, p...), v
	case *IncDecExpr:
		switch x.X.(type) {
		case *VarExpr, *MapExpr:
		default:
			ds.d.Add(x.X.Span(), "++ and -- change a variable or a map element", "cannot %s this", x.Op)
			return nil, x.X
		}
		pre, target := ds.hoist(x.X)
		x.X = target
		if x.Prefix {
			return append(pre, incAssign(x)), cloneExpr(target)
		}
		old := ds.temp(x.At)
		pre = append(pre, &AssignStmt{At: x.At, Target: old, Op: "=", Value: cloneExpr(target)}, incAssign(x))
		return pre, cloneExpr(old)
	case *CondExpr:
		pre, c := ds.hoist(x.Cond)
		if !hasSugar(x.Then) && !hasSugar(x.Else) {
			x.Cond = c
			return pre, x
		}
		v := ds.temp(x.At)
		then := &Block{At: x.Then.Span(), Stmts: ds.stmt(&AssignStmt{At: x.Then.Span(), Target: v, Op: "=", Value: x.Then})}
		els := &Block{At: x.Else.Span(), Stmts: ds.stmt(&AssignStmt{At: x.Else.Span(), Target: cloneExpr(v), Op: "=", Value: x.Else})}
		return append(pre, &IfStmt{At: x.At, Cond: c, Then: then, Else: els}), cloneExpr(v)
	case *BinaryExpr:
		pre, l := ds.hoist(x.X)
		x.X = l
		if (x.Op == "&&" || x.Op == "||") && hasSugar(x.Y) {
			// The right side runs only where the left does not decide.
			v := ds.temp(x.At)
			right := &BinaryExpr{At: x.Y.Span(), Op: "!=", OpSpan: x.OpSpan, X: x.Y, Y: &IntLit{At: x.Y.Span()}}
			decided := &BinaryExpr{At: x.At, Op: "!=", OpSpan: x.OpSpan, X: &IntLit{At: x.At, Value: boolInt(x.Op == "||")}, Y: &IntLit{At: x.At}}
			evalRight := &Block{At: x.Y.Span(), Stmts: ds.stmt(&AssignStmt{At: x.Y.Span(), Target: v, Op: "=", Value: right})}
			setDecided := &Block{At: x.At, Stmts: []Stmt{&AssignStmt{At: x.At, Target: cloneExpr(v), Op: "=", Value: decided}}}
			s := &IfStmt{At: x.At, Cond: l, Then: evalRight, Else: setDecided}
			if x.Op == "||" {
				s.Then, s.Else = setDecided, evalRight
			}
			return append(pre, s), cloneExpr(v)
		}
		p, r := ds.hoist(x.Y)
		x.Y = r
		return append(pre, p...), x
	case *ParenExpr:
		pre, in := ds.hoist(x.X)
		x.X = in
		return pre, x
	case *UnaryExpr:
		pre, in := ds.hoist(x.X)
		x.X = in
		return pre, x
	case *CastExpr:
		pre, in := ds.hoist(x.X)
		x.X = in
		return pre, x
	case *FieldExpr:
		pre, in := ds.hoist(x.X)
		x.X = in
		return pre, x
	case *IndexExpr:
		pre, in := ds.hoist(x.X)
		p, i := ds.hoist(x.Index)
		x.X, x.Index = in, i
		return append(pre, p...), x
	case *CallExpr:
		return ds.hoistList(x.Args), x
	case *MapExpr:
		return ds.hoistList(x.Keys), x
	case *TupleExpr:
		return ds.hoistList(x.Elems), x
	}
	ds.d.Add(e.Span(), "compute it in a statement before, into a variable", "a block expression or ++/-- is not supported here")
	return nil, e
}

func boolInt(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// pure reports whether an expression has no effect: a variable, a map
// read, a literal, a builtin value, or operators of those. A statement
// of one does nothing.
func pure(e Expr) bool {
	p := true
	Inspect(e, func(n Node) bool {
		switch n.(type) {
		case *CallExpr, *BlockExpr, *IncDecExpr:
			p = false
		}
		return p
	})
	return p
}

// withoutPure drops the statements of a block expression (a macro's
// body, where `x;` names an argument) that do nothing; bpftrace warns of
// a discarded value, skbtrace leaves them out. Elsewhere such a statement
// is an error the checker reports.
func withoutPure(stmts []Stmt) []Stmt {
	out := stmts[:0]
	for _, s := range stmts {
		if x, ok := s.(*ExprStmt); ok && pure(x.X) {
			continue
		}
		out = append(out, s)
	}
	return out
}
