package lang

// BlockExpr is bpftrace 0.26's block expression `{ stmts; value }`: the
// statements run, then the value, the block's last statement when it is
// an expression with no `;` after it (nil where there is none). An if
// expression, `if (c) { a } else { b }`, is lowered to a CondExpr of two
// BlockExprs, and `x++` inside an expression to a BlockExpr too. The
// parser desugars them all before returning the tree (desugar.go): the
// checker and the code generator never see one.
type BlockExpr struct {
	At    Span
	Stmts []Stmt
	Value Expr
}

// IncDecExpr is `x++`, `x--` (Prefix false: the value before) or `++x`,
// `--x` (the value after) inside an expression; Op is "++" or "--".
type IncDecExpr struct {
	At     Span
	Op     string
	Prefix bool
	X      Expr
}

func (*BlockExpr) exprNode()  {}
func (*IncDecExpr) exprNode() {}

// Span returns the source span of the node.
func (n *BlockExpr) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *IncDecExpr) Span() Span { return n.At }

// blockExpr lowers `{ ... }` in an expression: its last statement is the
// value where it is an expression with no `;` after it.
func (l *lowerer) blockExpr(g *gBlock) *BlockExpr {
	b := l.block(g)
	e := &BlockExpr{At: b.At, Stmts: b.Stmts}
	if n := len(g.Stmts); n > 0 && len(g.Stmts[n-1].Semis) == 0 && len(b.Stmts) > 0 {
		if x, ok := b.Stmts[len(b.Stmts)-1].(*ExprStmt); ok {
			e.Stmts, e.Value = b.Stmts[:len(b.Stmts)-1], x.X
		} else if gi := g.Stmts[n-1].If; gi != nil && hasElse(gi) {
			// An if with an else ending a block that is a value is an
			// if expression where each branch has a value: `if (a) {
			// if (b) { 1 } else { 2 } } else { 3 }`.
			if v := l.ifExpr(gi); valued(v) {
				e.Stmts, e.Value = b.Stmts[:len(b.Stmts)-1], v
			}
		}
	}
	return e
}

// valued reports whether an if expression's branches all have a value.
func valued(e Expr) bool {
	switch x := e.(type) {
	case *CondExpr:
		return valued(x.Then) && valued(x.Else)
	case *BlockExpr:
		return x.Value != nil
	}
	return true
}

// hasElse reports whether every branch of an if chain ends in an else.
func hasElse(g *gIf) bool {
	for g.ElseIf != nil {
		g = g.ElseIf
	}
	return g.Else != nil
}

// ifExpr lowers `if (c) { a } else { b }` in an expression to
// `c ? { a } : { b }`; an if without an else has no value there.
func (l *lowerer) ifExpr(g *gIf) Expr {
	sp := l.span(g.Pos, g.EndPos)
	cond := l.ifCond(g)
	then := valueOnly(l.blockExpr(g.Then))
	var els Expr
	switch {
	case g.ElseIf != nil:
		els = l.ifExpr(g.ElseIf)
	case g.Else != nil:
		els = valueOnly(l.blockExpr(g.Else))
	default:
		l.diags.Add(sp, "give it an else: if (c) { a } else { b }", "an if expression needs an else")
		return then
	}
	return &CondExpr{At: sp, Cond: cond, Then: then, Else: els}
}

// incDec lowers ++ and -- inside an expression; a statement of one alone
// is an assignment (stmt).
func (l *lowerer) incDec(sp Span, op string, prefix bool, x Expr) Expr {
	return &IncDecExpr{At: sp, Op: op, Prefix: prefix, X: x}
}

// valueOnly is a block expression's value where it has no statements.
func valueOnly(b *BlockExpr) Expr {
	if len(b.Stmts) == 0 && b.Value != nil {
		return b.Value
	}
	return b
}
