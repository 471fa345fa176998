package lang

import "fmt"

// mapLen is bpftrace's len(@m), the number of the map's elements, written
// as a block that counts them with a for loop over the map:
//
//	{ $n = 0; for ($kv : @m) { $n += 1 } $n }
//
// (bpf_for_each_map_elem, Linux 5.13). skbtrace's bare len, the packet's
// length, is another name: only len(...) of a map is this.
func mapLen(c *CallExpr, m *MapExpr) Expr {
	at := c.At
	n := fmt.Sprintf("__len%d", at.Start.Offset)
	count := func() *VarExpr { return &VarExpr{At: at, Name: n} }
	loop := &ForStmt{At: at, Var: &VarExpr{At: at, Name: n + "_kv"}, Map: m, Body: &Block{At: at, Stmts: []Stmt{
		&AssignStmt{At: at, Target: count(), Op: "+=", Value: &IntLit{At: at, Value: 1}},
	}}}
	// The count starts at a zero the verifier cannot know (a time less
	// itself): counted from a known 0, the count is exact each turn, and
	// where the program then branches on it the verifier walks the loop
	// once per count it might reach, never seeing a state repeat.
	t := func() *VarExpr { return &VarExpr{At: at, Name: n + "_t"} }
	return &BlockExpr{At: at, Stmts: []Stmt{
		&AssignStmt{At: at, Target: t(), Op: "=", Value: &Ident{At: at, Name: "nsecs"}},
		&AssignStmt{At: at, Target: count(), Op: "=", Value: &BinaryExpr{At: at, Op: "-", X: t(), Y: t()}},
		loop,
	}, Value: count()}
}

// isWholeMap reports whether e is a map named alone, @m.
func isWholeMap(e Expr) bool {
	m, ok := e.(*MapExpr)
	return ok && len(m.Keys) == 0
}
