package lang

// findCall is bpftrace 0.26's find(@m, key, $v): whether @m has key,
// and, where it has, $v set to its value. It is written as
//
//	has_key(@m, key) ? { $v = @m[key]; true } : false
//
// which the desugaring then lowers as any block in a condition.
func findCall(c *CallExpr, d *Diagnostics) Expr {
	m, ok := c.Args[0].(*MapExpr)
	if !ok || len(m.Keys) > 0 {
		d.Add(c.Args[0].Span(), "e.g. find(@start, tid, $t)", "find needs a map named alone, then its key")
		return c
	}
	v, ok := c.Args[2].(*VarExpr)
	if !ok {
		d.Add(c.Args[2].Span(), "e.g. find(@start, tid, $t)", "find's third argument must be a scratch variable that gets the value")
		return c
	}
	key := c.Args[1]
	elem := func() *MapExpr {
		return &MapExpr{At: Span{Start: m.At.Start, End: key.Span().End}, Name: m.Name, Keys: []Expr{key}}
	}
	has := &CallExpr{At: c.At, Name: "has_key", NameSpan: c.NameSpan, Args: []Expr{elem()}}
	set := &AssignStmt{At: c.At, Target: v, Op: "=", Value: elem()}
	yes := &BlockExpr{At: c.At, Stmts: []Stmt{set}, Value: &Ident{At: c.At, Name: "true"}}
	return &CondExpr{At: c.At, Cond: has, Then: yes, Else: &Ident{At: c.At, Name: "false"}}
}
