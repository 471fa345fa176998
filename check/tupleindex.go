package check

import (
	"strconv"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// bpftrace 0.25's array-style access to a tuple's elements: $t[1] is
// $t.1. The index is an integer known when the script is compiled (a
// literal, or arithmetic on literals: (1, "a")[1 - 1]), never a
// variable: each element has a type of its own.

// tupleIndex types x[N] on a tuple x and records the x.N it reads.
func (c *checker) tupleIndex(e *lang.IndexExpr, x types.Type) types.Type {
	tt := x.Tuple
	k, ok := c.constInt(e.Index)
	if !ok || k < 0 {
		c.errorf(e, "the index is a constant integer: "+c.text(e.X)+"[0], "+c.text(e.X)+"[1 - 1]",
			"array-style access for tuples is only valid for integer literals")
		return types.Bad
	}
	if k >= int64(len(tt.Elems)) {
		c.errorf(e, "its elements are [0] to ["+strconv.Itoa(len(tt.Elems)-1)+"]",
			"invalid tuple index %d: %s has %d elements", k, c.text(e.X), len(tt.Elems))
		return types.Bad
	}
	i := int(k)
	fe := &lang.FieldExpr{At: e.At, X: e.X, Name: strconv.Itoa(i), NameSpan: e.Index.Span()}
	c.info.TupleElems[fe] = i
	c.info.TupleIdx[e] = fe
	c.info.Types[fe] = tt.Elems[i]
	return tt.Elems[i]
}
