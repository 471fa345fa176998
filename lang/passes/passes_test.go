package passes_test

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/lang"
)

// parse parses a script of a test.
func parse(t *testing.T, text string) *lang.Script {
	t.Helper()
	s, err := lang.Parse(&lang.Source{Name: "test.st", Text: text})
	if err != nil {
		t.Fatalf("parse %q: %v", text, err)
	}
	return s
}

var spans = regexp.MustCompile(`\s+\[\d+:\d+-\d+:\d+\]`)

// shape is a script's tree as lang.Dump prints it, without positions: two
// scripts have one shape where their trees differ only in where the nodes
// came from.
func shape(s *lang.Script) string {
	var b strings.Builder
	lang.Dump(&b, s)
	return spans.ReplaceAllString(b.String(), "")
}

// unchanged fails the test where a pass changed the tree it was given:
// the tree is compared, node by node, with a fresh parse of its text.
func unchanged(t *testing.T, s *lang.Script) {
	t.Helper()
	fresh, err := lang.Parse(s.Src)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, fresh) {
		t.Errorf("the pass changed the tree it was given:\n%s\nwant, as parsed:\n%s", shape(s), shape(fresh))
	}
}

// wantShape fails the test where got's tree, as text, is not want.
func wantShape(t *testing.T, got *lang.Script, want string) {
	t.Helper()
	if g := text(got); g != want {
		t.Errorf("got  %s\nwant %s", g, want)
	}
}

// text writes a tree back as the script it is, each node from its own
// fields (a block's statements, an &&'s operands) down to the leaves,
// which are the source they came from: a pass's tree shows as a script.
func text(s *lang.Script) string {
	var b strings.Builder
	src := func(n lang.Node) string { return s.Src.Slice(n.Span()) }
	var expr func(e lang.Expr)
	expr = func(e lang.Expr) {
		switch e := e.(type) {
		case *lang.BinaryExpr:
			expr(e.X)
			b.WriteString(" " + e.Op + " ")
			expr(e.Y)
		case *lang.ParenExpr:
			b.WriteString("(")
			expr(e.X)
			b.WriteString(")")
		default:
			b.WriteString(src(e))
		}
	}
	var stmt func(st lang.Stmt)
	block := func(bl *lang.Block) {
		b.WriteString("{")
		for _, st := range bl.Stmts {
			b.WriteString(" ")
			stmt(st)
		}
		b.WriteString(" }")
	}
	loop := func(head lang.Node, body *lang.Block) {
		b.WriteString(strings.TrimSpace(s.Src.Text[head.Span().Start.Offset:body.At.Start.Offset]) + " ")
		block(body)
	}
	stmt = func(st lang.Stmt) {
		switch st := st.(type) {
		case *lang.Block:
			block(st)
		case *lang.IfStmt:
			b.WriteString("if (")
			expr(st.Cond)
			b.WriteString(") ")
			block(st.Then)
			if st.Else != nil {
				b.WriteString(" else ")
				stmt(st.Else)
			}
		case *lang.ForStmt:
			loop(st, st.Body)
		case *lang.WhileStmt:
			loop(st, st.Body)
		case *lang.UnrollStmt:
			loop(st, st.Body)
		default:
			b.WriteString(src(st))
		}
	}
	for i, p := range s.Probes {
		if i > 0 {
			b.WriteString("\n")
		}
		for j, sp := range p.Specs {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(sp.Text)
		}
		if p.Pred != nil {
			b.WriteString(" /")
			expr(p.Pred)
			b.WriteString("/")
		}
		b.WriteString(" ")
		block(p.Body)
	}
	return b.String()
}
