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
