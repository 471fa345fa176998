package check

import (
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// printTop checks bpftrace's print(@map, top) and print(@map, top, div):
// the map's top entries (the largest values; 0: all of them), each value
// divided by div. It reports false where the call is not that form: a
// whole map first, then integer constants. (print(@m, len) prints an
// event line, as before; an aggregation there is an error it makes.)
func (c *checker) printTop(e *lang.CallExpr) bool {
	m, ok := e.Args[0].(*lang.MapExpr)
	if !ok || len(m.Keys) > 0 || len(e.Args) > 3 {
		return false
	}
	vals := make([]int64, len(e.Args)-1)
	for i, a := range e.Args[1:] {
		if t := c.expr(a); t.Kind == types.Invalid {
			return true
		}
		v, ok := c.constInt(a)
		if !ok {
			if mi := c.info.Maps[m.Name]; mi != nil && mi.Value.Kind == types.Agg {
				c.errorf(a, "the number of entries and the divisor are fixed when the script is compiled: print(@"+m.Name+", 10)",
					"print(@map, top, div) takes integer constants")
				return true
			}
			return false
		}
		vals[i] = v
	}
	c.mapRef(m)
	c.info.Types[m] = types.Type{Kind: types.MapRef}
	if vals[0] < 0 {
		c.errorf(e.Args[1], "0 prints every entry", "print's top is %d, less than 0", vals[0])
	}
	if len(vals) > 1 && vals[1] <= 0 {
		c.errorf(e.Args[2], "the values are divided by it: 1 leaves them as they are", "print's divisor is %d, not a positive integer", vals[1])
	}
	return true
}
