package lang

import (
	"strconv"
	"strings"
)

// forStmt lowers a for loop: its head names a map, or a range start..end.
func (l *lowerer) forStmt(g *gFor) Stmt {
	s := &ForStmt{At: l.span(g.Pos, g.EndPos), Body: l.block(g.Body)}
	at := l.src.Text[g.Pos.Offset:]
	off := g.Pos.Offset + strings.Index(at, g.Var)
	s.Var = &VarExpr{At: Span{Start: l.src.PosAt(off), End: l.src.PosAt(off + len(g.Var))}, Name: g.Var[1:]}
	if name := s.Var.Name; name == "#" || name[0] >= '0' && name[0] <= '9' {
		l.diags.Add(s.Var.At, "a loop's variable is a scratch variable: for ($kv : @map)", "a loop cannot assign the positional parameter $%s", name)
	}
	head := Span{Start: s.At.Start, End: s.Body.At.Start}
	if (g.Open == "") != (g.Close == "") {
		l.diags.Add(head, "write the head in parentheses, for ($i : 0..10), or without them, for $i : 0..10", "syntax error: unbalanced parentheses around the for loop's head")
	}
	iter := l.unary(g.Iter)
	if g.End != nil {
		s.Start, s.End = iter, l.unary(g.End)
		return s
	}
	m, ok := iter.(*MapExpr)
	if !ok || len(m.Keys) > 0 {
		l.diags.Add(iter.Span(), "a for loop iterates over a map's elements, for ($kv : @name), or over a range of integers, for ($i : 0..10)",
			"for iterates over a map or a range, not %s", l.src.Slice(iter.Span()))
		s.Start, s.End = &IntLit{At: iter.Span()}, &IntLit{At: iter.Span()}
		return s
	}
	s.Map = m
	return s
}

// paren lowers a parenthesis: one unnamed element without a trailing comma
// is a parenthesised expression; else a tuple, or, its elements named, a
// record.
func (l *lowerer) paren(sp Span, g *gParen) Expr {
	if len(g.Elems) == 1 && g.Comma == "" && g.Elems[0].Name == "" {
		return &ParenExpr{At: sp, X: l.expr(g.Elems[0].X)}
	}
	t := &TupleExpr{At: sp}
	named := 0
	for _, e := range g.Elems {
		t.Elems = append(t.Elems, l.expr(e.X))
		if e.Name != "" {
			named++
		}
	}
	if named == 0 {
		return t
	}
	for i, e := range g.Elems {
		nameSpan := Span{Start: Pos{Offset: e.Pos.Offset, Line: e.Pos.Line, Col: e.Pos.Column}, End: l.src.PosAt(e.Pos.Offset + len(e.Name))}
		if e.Name == "" {
			l.diags.Add(t.Elems[i].Span(), "a record names each of its fields: (a=1, b=2); a tuple none: (1, 2)", "field %d of this record has no name", i)
			nameSpan.End = nameSpan.Start
		}
		for j := range i {
			if e.Name != "" && t.Names[j] == e.Name {
				l.diags.Add(nameSpan, "", "field %s appears twice in this record", e.Name)
			}
		}
		t.Names = append(t.Names, e.Name)
		t.NameSpans = append(t.NameSpans, nameSpan)
	}
	return t
}

// TupleIndex is the element a `.N` after a tuple names (its Name is N), or
// false for a name.
func TupleIndex(e *FieldExpr) (int, bool) {
	if e.Arrow || e.Name == "" || e.Name[0] < '0' || e.Name[0] > '9' {
		return 0, false
	}
	n, err := strconv.Atoi(e.Name)
	return n, err == nil
}

// addressTypo reports a number followed by .N parts that are not an
// address's four, 10.0.1, which would otherwise read as elements of a
// tuple.
func (l *lowerer) addressTypo(x Expr, sels []*gSelector) {
	sp := x.Span()
	for _, s := range sels {
		if s.Elem == "" {
			break
		}
		sp.End = l.span(s.Pos, s.EndPos).End
	}
	l.diags.Add(sp, "an IPv4 address has four parts: 10.0.0.1; .N after a tuple reads its element N", "%s is not an address", l.src.Slice(sp))
}

// failedCall reports a call whose arguments do not parse as a call's but
// do as a tuple's, print(a,) or f(a=1): the name and the tuple were taken
// for two statements. It reports where the call goes wrong and returns
// true; false for anything else.
func (l *lowerer) failedCall(s, next *gStmt) bool {
	end := s.EndPos.Offset
	for end > s.Pos.Offset && isSpace(l.src.Text[end-1]) {
		end--
	}
	if next.Pos.Offset != end || end == 0 || !isIdentChar(l.src.Text[end-1]) || next.Target == nil || next.Target.Cond == nil {
		return false
	}
	head := next.Target.Cond.Head
	if head.Postfix == nil || head.Postfix.X.Paren == nil {
		return false
	}
	paren := head.Postfix.X.Paren
	for _, e := range paren.Elems {
		if e.Name != "" {
			at := e.Pos.Offset + len(e.Name)
			for at < len(l.src.Text) && l.src.Text[at] != '=' {
				at++
			}
			l.diags.Add(Span{Start: l.src.PosAt(at), End: l.src.PosAt(at + 1)}, "compare with ==; a call's arguments are expressions", `syntax error: unexpected "="`)
			return true
		}
	}
	if paren.Comma == "" {
		return false
	}
	at := l.span(paren.Pos, paren.EndPos).End.Offset - 1
	l.diags.Add(Span{Start: l.src.PosAt(at), End: l.src.PosAt(at + 1)}, "a call's arguments do not end with a comma: print(a, b)", `syntax error: unexpected ")"`)
	return true
}
