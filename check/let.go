package check

import (
	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// declared is what a `let` said of a variable.
type declared uint8

const (
	declNone    declared = iota // not declared: typed by its first assignment
	declPending                 // let $x; typed by its first assignment
	declFixed                   // let $x: type; typed by the declaration
)

// let checks bpftrace's declaration of a scratch variable. A variable is
// declared once, before it is assigned; `let $x = v` is then `$x = v`, and
// `let $x: T = v` keeps T whatever v's width (as a cast to T would).
// Without a value the variable starts at zero, as bpftrace's does.
func (c *checker) let(s *lang.LetStmt) {
	name := s.Var.Name
	if _, exists := c.vars[name]; exists || c.declared[name] != declNone {
		c.errorf(s.Var, "assign it: $"+name+" = ...", "$%s is already declared or assigned in this probe", name)
		return
	}
	if s.Type == "" {
		c.declared[name] = declPending
		if s.Value != nil {
			c.assign(&lang.AssignStmt{At: s.At, Target: s.Var, Op: "=", Value: s.Value})
		}
		return
	}
	t := c.namedType(typeSpan{s.TypeSpan}, s.Type, s.Ptr, "a variable holding")
	c.declared[name] = declFixed
	c.vars[name] = t
	c.info.Types[s.Var] = t
	if t.Kind == types.Invalid || s.Value == nil {
		return
	}
	v := c.expr(s.Value)
	if v.Kind == types.Invalid {
		return
	}
	if !sameKind(t, v) && !(t.Kind == types.Ptr && v.IsInt()) {
		c.errorf(s.Value, "", "$%s is declared %s; it cannot hold %s", name, t, v)
	}
}

// typeSpan is a declaration's type, as a node to report errors at.
type typeSpan struct{ at lang.Span }

func (t typeSpan) Span() lang.Span { return t.at }
