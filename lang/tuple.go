package lang

// TupleExpr is bpftrace's tuple, `(a, b)` (`(a,)` of one element, `()` of
// none), or record, `(name=a, other=b)`: Names are a record's field names,
// each spanning NameSpans[i]; nil for a tuple.
type TupleExpr struct {
	At        Span
	Elems     []Expr
	Names     []string
	NameSpans []Span
}

func (*TupleExpr) exprNode() {}

// Span returns the source span of the node.
func (n *TupleExpr) Span() Span { return n.At }

// EmptyTuple reports whether e is the empty tuple, `()` (in parentheses
// too): bpftrace's value of nothing.
func EmptyTuple(e Expr) bool {
	t, ok := Unparen(e).(*TupleExpr)
	return ok && len(t.Elems) == 0
}
