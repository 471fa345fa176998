package check

import (
	"strconv"
	"strings"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// bpftrace's tuples and records: a tuple (1, comm) holds values of any
// storable type, read by position ($t.0); a record (a=1, b=comm) is a
// tuple whose elements also have names ($r.a). Both are values like a
// string: kept in variables, map values and keys, printed whole. A map's
// one key that is a tuple is the map's keys: @m[(a, b)] and @m[$t], $t a
// tuple, are @m[a, b] (bpftrace's multi-key maps are keyed by a tuple).

// tuple types a tuple or record expression.
func (c *checker) tuple(e *lang.TupleExpr) types.Type {
	elems := make([]types.Type, len(e.Elems))
	bad := false
	for i, x := range e.Elems {
		t := c.expr(x)
		switch {
		case t.Kind == types.Invalid:
			bad = true
		case !storable(t):
			what := "a tuple"
			if e.Names != nil {
				what = "a record"
			}
			c.errorf(x, valueHint(x, t), "%s cannot hold %s", what, t)
			bad = true
		}
		elems[i] = t
	}
	if len(e.Elems) == 0 {
		// bpftrace's empty tuple, (): a value of no type ("none"), as
		// a statement or a block's last expression; it cannot be
		// stored or printed.
		return types.None
	}
	if bad {
		return types.Bad
	}
	return types.NewTuple(elems, e.Names)
}

// tupleElem types `x.N` and, on a record, `x.name`: an element of a tuple.
func (c *checker) tupleElem(e *lang.FieldExpr, x types.Type) types.Type {
	tt := x.Tuple
	if e.Arrow {
		c.errorf(e, "write "+c.text(e.X)+"."+e.Name, "%s is %s, not a pointer; use .", c.text(e.X), x)
		return types.Bad
	}
	if i, ok := lang.TupleIndex(e); ok {
		if i >= len(tt.Elems) {
			c.errorf(nameNode{e.NameSpan}, "its elements are ."+"0 to ."+strconv.Itoa(len(tt.Elems)-1), "%s has %d elements, no .%d", c.text(e.X), len(tt.Elems), i)
			return types.Bad
		}
		c.info.TupleElems[e] = i
		return tt.Elems[i]
	}
	if tt.Names == nil {
		c.errorf(nameNode{e.NameSpan}, "read a tuple's elements by position: "+c.text(e.X)+".0", "%s is a tuple, whose elements have no names", c.text(e.X))
		return types.Bad
	}
	i := tt.Field(e.Name)
	if i < 0 {
		hint := "its fields are " + strings.Join(tt.Names, ", ")
		if m := lang.Suggest(e.Name, tt.Names); m != "" {
			hint = "did you mean ." + m + "?"
		}
		c.errorf(nameNode{e.NameSpan}, hint, "record %s has no field %s", c.text(e.X), e.Name)
		return types.Bad
	}
	c.info.TupleElems[e] = i
	return tt.Elems[i]
}

// notTuple reports `.N` after something that is not a tuple.
func (c *checker) notTuple(e *lang.FieldExpr, x types.Type) {
	c.errorf(e, "."+e.Name+" reads element "+e.Name+" of a tuple", "%s is %s, not a tuple", c.text(e.X), x)
}

// sameTuple reports whether two tuples may share a variable or a map: as
// many elements, the same names, each of the same kind and format.
func sameTuple(a, b types.Type) bool {
	ta, tb := a.Tuple, b.Tuple
	if len(ta.Elems) != len(tb.Elems) || (ta.Names == nil) != (tb.Names == nil) {
		return false
	}
	for i := range ta.Elems {
		j := i
		if ta.Names != nil {
			// A record's fields match by name, in any order: bpftrace's
			// (a=1, b=2) and (b=2, a=1) are one type.
			if j = tb.Field(ta.Names[i]); j < 0 {
				return false
			}
		}
		if !sameKind(ta.Elems[i], tb.Elems[j]) || !sameFormat(ta.Elems[i], tb.Elems[j]) {
			return false
		}
	}
	return true
}

// widenTuple is widen for tuples: each element widened, the tuple's
// format kept (a rule() record in a map key stays one).
func widenTuple(a, b types.Type) types.Type {
	elems := make([]types.Type, len(a.Tuple.Elems))
	for i := range elems {
		j := i
		if a.Tuple.Names != nil {
			// b's field of the same name (sameTuple matched them).
			j = b.Tuple.Field(a.Tuple.Names[i])
		}
		elems[i] = widen(a.Tuple.Elems[i], b.Tuple.Elems[j])
	}
	t := types.NewTuple(elems, a.Tuple.Names)
	t.Fmt = a.Fmt
	return t
}

// SpreadKey reports whether a map element's one key is a tuple, which
// stands for the map's keys: @m[$t] is @m[$t.0, $t.1].
func (info *Info) SpreadKey(m *lang.MapExpr) bool {
	if len(m.Keys) != 1 {
		return false
	}
	t := info.Types[m.Keys[0]]
	return t.Kind == types.Tuple && t.Tuple.Names == nil
}

// keyCount is how many keys a map element names, a spread tuple's
// elements counted.
func (c *checker) keyCount(m *lang.MapExpr) int {
	if c.info.SpreadKey(m) {
		return len(c.info.Types[m.Keys[0]].Tuple.Elems)
	}
	return len(m.Keys)
}

// keyNode is where a map element's key i is written: its expression, or
// the tuple that holds it.
func keyNode(m *lang.MapExpr, i int) lang.Node {
	if i < len(m.Keys) {
		return m.Keys[i]
	}
	return m.Keys[0]
}

// readKeys checks the keys of a map element read or deleted against the
// map's: of the same kinds (a tuple where the map keeps a tuple).
func (c *checker) readKeys(m *lang.MapExpr, mi *MapInfo) {
	keys := make([]types.Type, len(m.Keys))
	for i, k := range m.Keys {
		keys[i] = c.info.Types[k]
	}
	if c.info.SpreadKey(m) {
		keys = keys[0].Tuple.Elems
	}
	for i, k := range keys {
		if k.Kind == types.Invalid || mi.Keys[i].Kind == types.Invalid || sameKind(k, mi.Keys[i]) || ptrIntKeys(k, mi.Keys[i]) {
			continue
		}
		c.errorf(keyNode(m, i), "a map keeps one key type", "key %d of %s is %s here but %s at %s", i+1, mapName(m.Name), k, mi.Keys[i], mi.First.Start)
	}
}

// emptyTupleHint is the hint where e, used as a value, is (): bpftrace's
// empty tuple, whose type is none.
func emptyTupleHint(e lang.Expr) string {
	if lang.EmptyTuple(e) {
		return "() is the empty tuple, of no type: it holds no value to keep or print"
	}
	return ""
}
