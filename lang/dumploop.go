package lang

import "strings"

// forStmt dumps a for loop: its variable, the map or the range, the body.
func (d dumper) forStmt(depth int, s *ForStmt) {
	if s.Map != nil {
		d.line(depth, s, "For map")
	} else {
		d.line(depth, s, "For range")
	}
	d.expr(depth+1, s.Var)
	if s.Map != nil {
		d.expr(depth+1, s.Map)
	} else {
		d.expr(depth+1, s.Start)
		d.expr(depth+1, s.End)
	}
	d.stmt(depth+1, s.Body)
}

// tuple dumps a tuple, or a record with its field names.
func (d dumper) tuple(depth int, e *TupleExpr) {
	if e.Names != nil {
		d.line(depth, e, "Record %s", strings.Join(e.Names, ","))
	} else {
		d.line(depth, e, "Tuple n=%d", len(e.Elems))
	}
	for _, x := range e.Elems {
		d.expr(depth+1, x)
	}
}
