package lang

// Inspect calls f for n and, while f returns true, for every node below
// it, depth first in source order.
func Inspect(n Node, f func(Node) bool) {
	if n == nil || !f(n) {
		return
	}
	each := func(ns ...Node) {
		for _, c := range ns {
			if c != nil {
				Inspect(c, f)
			}
		}
	}
	switch n := n.(type) {
	case *Script:
		for _, p := range n.Probes {
			each(p)
		}
	case *Probe:
		for _, s := range n.Specs {
			each(s)
		}
		if n.Pred != nil {
			each(n.Pred)
		}
		each(n.Body)
	case *Block:
		for _, s := range n.Stmts {
			each(s)
		}
	case *ExprStmt:
		each(n.X)
	case *AssignStmt:
		each(n.Target, n.Value)
	case *LetStmt:
		each(n.Var)
		if n.Value != nil {
			each(n.Value)
		}
	case *IfStmt:
		each(n.Cond, n.Then)
		if n.Else != nil {
			each(n.Else)
		}
	case *WhileStmt:
		each(n.Cond, n.Body)
	case *UnrollStmt:
		each(n.Count, n.Body)
	case *ForStmt:
		each(n.Var)
		if n.Map != nil {
			each(n.Map)
		} else {
			each(n.Start, n.End)
		}
		each(n.Body)
	case *MapExpr:
		for _, k := range n.Keys {
			each(k)
		}
	case *CallExpr:
		for _, a := range n.Args {
			each(a)
		}
	case *FieldExpr:
		each(n.X)
	case *IndexExpr:
		each(n.X, n.Index)
	case *UnaryExpr:
		each(n.X)
	case *BinaryExpr:
		each(n.X, n.Y)
	case *CondExpr:
		each(n.Cond, n.Then, n.Else)
	case *TupleExpr:
		for _, e := range n.Elems {
			each(e)
		}
	case *ParenExpr:
		each(n.X)
	case *CastExpr:
		each(n.X)
	case *TypeOfExpr:
		if n.X != nil {
			each(n.X)
		}
	case *BlockExpr:
		for _, s := range n.Stmts {
			each(s)
		}
		if n.Value != nil {
			each(n.Value)
		}
	case *IncDecExpr:
		each(n.X)
	}
}
