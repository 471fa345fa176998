package lang

import (
	"fmt"
	"io"
	"strings"
)

// Dump writes the tree in an indented form, one node a line with its span,
// for `skbtrace -d` and the parser's golden files.
func Dump(w io.Writer, s *Script) { DumpWith(w, s, nil) }

// DumpWith is Dump with a note after each node, such as the type the checker
// gave an expression; describe returns "" for nodes it has nothing to say of.
func DumpWith(w io.Writer, s *Script, describe func(Node) string) {
	d := dumper{w: w, describe: describe}
	d.line(0, s, "Script")
	if s.Config != nil {
		d.config(1, s.Config)
	}
	for _, p := range s.Probes {
		d.probe(1, p)
	}
}

type dumper struct {
	w        io.Writer
	describe func(Node) string
}

func (d dumper) line(depth int, n Node, format string, args ...any) {
	sp := n.Span()
	note := ""
	if d.describe != nil {
		if s := d.describe(n); s != "" {
			note = "  : " + s
		}
	}
	fmt.Fprintf(d.w, "%s%s  [%d:%d-%d:%d]%s\n", strings.Repeat("  ", depth), fmt.Sprintf(format, args...),
		sp.Start.Line, sp.Start.Col, sp.End.Line, sp.End.Col, note)
}

func (d dumper) config(depth int, c *Config) {
	d.line(depth, c, "Config")
	for _, e := range c.Entries {
		switch {
		case e.IsStr:
			d.line(depth+1, e, "Set %s = %q", e.Key, e.Value)
		case e.IsInt:
			d.line(depth+1, e, "Set %s = %d", e.Key, e.Int)
		default:
			d.line(depth+1, e, "Set %s = %s", e.Key, e.Value)
		}
	}
}

func (d dumper) probe(depth int, p *Probe) {
	d.line(depth, p, "Probe")
	for _, s := range p.Specs {
		switch s.Kind {
		case ProbeTracepoint:
			d.line(depth+1, s, "Spec %s category=%s name=%s", s.Kind, s.Category, s.Name)
		case ProbeInterval:
			d.line(depth+1, s, "Spec %s period=%dns", s.Kind, s.Period)
		case ProbeProfile:
			if s.Hz != 0 {
				d.line(depth+1, s, "Spec %s hz=%d", s.Kind, s.Hz)
			} else {
				d.line(depth+1, s, "Spec %s period=%dns", s.Kind, s.Period)
			}
		case ProbeBpf, ProbeBpfRet:
			d.line(depth+1, s, "Spec %s type=%s name=%s id=%d", s.Kind, s.Category, s.Name, s.ProgID)
		case ProbeBegin, ProbeEnd:
			d.line(depth+1, s, "Spec %s", s.Kind)
		default:
			d.line(depth+1, s, "Spec %s target=%s", s.Kind, s.Target)
		}
	}
	if p.Pred != nil {
		d.line(depth+1, p.Pred, "Predicate")
		d.expr(depth+2, p.Pred)
	}
	d.stmt(depth+1, p.Body)
}

func (d dumper) stmt(depth int, s Stmt) {
	switch s := s.(type) {
	case *Block:
		form := "{}"
		if s.Angle {
			form = "<>"
		}
		d.line(depth, s, "Block %s", form)
		for _, st := range s.Stmts {
			d.stmt(depth+1, st)
		}
	case *ExprStmt:
		d.line(depth, s, "ExprStmt")
		d.expr(depth+1, s.X)
	case *AssignStmt:
		d.line(depth, s, "Assign %s", s.Op)
		d.expr(depth+1, s.Target)
		d.expr(depth+1, s.Value)
	case *LetStmt:
		ty := ""
		if s.Type != "" {
			ty = " : " + s.Type + strings.Repeat(" *", s.Ptr)
		}
		d.line(depth, s, "Let%s", ty)
		d.expr(depth+1, s.Var)
		if s.Value != nil {
			d.expr(depth+1, s.Value)
		}
	case *IfStmt:
		d.line(depth, s, "If")
		d.expr(depth+1, s.Cond)
		d.stmt(depth+1, s.Then)
		if s.Else != nil {
			d.stmt(depth+1, s.Else)
		}
	case *ForStmt:
		d.forStmt(depth, s)
	case *WhileStmt:
		d.line(depth, s, "While")
		d.expr(depth+1, s.Cond)
		d.stmt(depth+1, s.Body)
	case *UnrollStmt:
		d.line(depth, s, "Unroll")
		d.expr(depth+1, s.Count)
		d.stmt(depth+1, s.Body)
	case *JumpStmt:
		d.line(depth, s, "Jump %s", s.Op)
	}
}

func (d dumper) expr(depth int, e Expr) {
	switch e := e.(type) {
	case *IntLit:
		d.line(depth, e, "Int %d", e.Value)
	case *StrLit:
		d.line(depth, e, "String %q", e.Value)
	case *IPLit:
		d.line(depth, e, "IP %s", e.Addr)
	case *CIDRLit:
		d.line(depth, e, "CIDR %s", e.Prefix)
	case *Ident:
		d.line(depth, e, "Ident %s", e.Name)
	case *VarExpr:
		d.line(depth, e, "Var $%s", e.Name)
	case *PosParam:
		if e.Count {
			d.line(depth, e, "Param $#")
		} else {
			d.line(depth, e, "Param $%d", e.N)
		}
	case *MapExpr:
		d.line(depth, e, "Map @%s keys=%d", e.Name, len(e.Keys))
		for _, k := range e.Keys {
			d.expr(depth+1, k)
		}
	case *CallExpr:
		d.line(depth, e, "Call %s", e.Name)
		for _, a := range e.Args {
			d.expr(depth+1, a)
		}
	case *FieldExpr:
		op := "."
		if e.Arrow {
			op = "->"
		}
		d.line(depth, e, "Field %s%s", op, e.Name)
		d.expr(depth+1, e.X)
	case *IndexExpr:
		d.line(depth, e, "Index")
		d.expr(depth+1, e.X)
		d.expr(depth+1, e.Index)
	case *UnaryExpr:
		d.line(depth, e, "Unary %s", e.Op)
		d.expr(depth+1, e.X)
	case *BinaryExpr:
		d.line(depth, e, "Binary %s", e.Op)
		d.expr(depth+1, e.X)
		d.expr(depth+1, e.Y)
	case *TupleExpr:
		d.tuple(depth, e)
	case *CondExpr:
		d.line(depth, e, "Cond")
		d.expr(depth+1, e.Cond)
		d.expr(depth+1, e.Then)
		d.expr(depth+1, e.Else)
	case *CastExpr:
		d.line(depth, e, "Cast %s%s", e.Type, strings.Repeat(" *", e.Ptr))
		d.expr(depth+1, e.X)
	case *TypeOfExpr:
		what := e.Type + strings.Repeat(" *", e.Ptr)
		if e.Type == "" {
			what = "expr"
		}
		if len(e.Fields) > 0 {
			what += ", " + strings.Join(e.Fields, ".")
		}
		d.line(depth, e, "%s(%s)", e.Op, what)
		if e.X != nil {
			d.expr(depth+1, e.X)
		}
	case *ParenExpr:
		d.line(depth, e, "Paren")
		d.expr(depth+1, e.X)
	}
}
