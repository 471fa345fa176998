package lang

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// bpftrace's macros (language.md, Macros): `macro add_one(x) { x + 1 }`
// at top level, called as add_one(5), or as a bare name where it takes no
// argument. A parameter written `x` takes any expression, put where the
// body names x (each time: `x; x;` runs it twice); `$a` takes a scratch
// variable, which the body may change, or any other expression, put
// where the body names $a as x's is; `@m` takes a map, which the body
// may change. The body sees no other variable or map of the caller: its
// own variables are renamed so that they cannot meet the caller's. A call
// is the body as a block expression (desugar.go then makes it
// statements).

// macroDef is a parsed macro definition.
type macroDef struct {
	name   string
	at     Span
	params []string // as written: x, $a, @m
	body   *BlockExpr
}

var macroParamRe = regexp.MustCompile(`^(?:\$[A-Za-z_]\w*|@\w*|[A-Za-z_]\w*)$`)

// macroDef parses the chunk ch, a macro definition (m the submatch
// offsets of macroRe in it).
func (r *rangeParser) macroDef(d *Diagnostics, ch chunk, m []int) {
	text := r.text[ch.start:ch.end]
	name := text[m[2]:m[3]]
	nameAt := Span{Start: r.src.PosAt(ch.start + m[2]), End: r.src.PosAt(ch.start + m[3])}
	def := &macroDef{name: name, at: nameAt}
	if params := strings.TrimSpace(text[m[4]:m[5]]); params != "" {
		for _, p := range strings.Split(params, ",") {
			p = strings.TrimSpace(p)
			if !macroParamRe.MatchString(p) {
				d.Add(nameAt, "a macro's parameters are names (x), scratch variables ($a) or maps (@m)", "invalid parameter %q of macro %s", p, name)
				return
			}
			def.params = append(def.params, p)
		}
	}
	// The body is parsed as the block of a probe whose spec stands where
	// the macro keyword is.
	brace := ch.start + m[1] - 1
	toks, err := appendTokens(nil, r.lexer(chunk{brace, ch.end}))
	if err != nil {
		addParseError(d, r.src, r.text, err)
		return
	}
	spec := lexer.Token{Type: tProbeSpec, Value: "begin", Pos: toks[0].Pos}
	toks = append([]lexer.Token{spec}, toks...)
	g, err := r.parseTokens(toks)
	if err != nil {
		addParseError(d, r.src, r.text, err)
		return
	}
	if len(g.Probes) != 1 {
		d.Add(nameAt, "", "macro %s: its body is one block { ... }", name)
		return
	}
	l := lowerer{src: r.src, diags: d}
	def.body = l.blockExpr(g.Probes[0].Body)
	if r.bpfMacros == nil {
		r.bpfMacros = map[string]*macroDef{}
	}
	if prev, dup := r.bpfMacros[name]; dup {
		d.Add(nameAt, fmt.Sprintf("the first is at %d:%d", prev.at.Start.Line, prev.at.Start.Col), "macro %s is defined twice", name)
		return
	}
	r.bpfMacros[name] = def
}

// parseTokens parses tokens as probes, by descent, or by participle where
// descent does not take them (participle then says what is wrong).
func (r *rangeParser) parseTokens(toks []lexer.Token) (*gScript, error) {
	var nodes descentNodes
	d := descent{toks: toks, nodes: &nodes}
	if g, ok := d.parseScript(); ok {
		return g, nil
	}
	peek, err := lexer.Upgrade(&sliceLexer{toks: toks})
	if err != nil {
		return nil, err
	}
	return parser().ParseFromLexer(peek)
}

// sliceLexer lexes tokens lexed before; the last is EOF.
type sliceLexer struct {
	toks []lexer.Token
	i    int
}

func (s *sliceLexer) Next() (lexer.Token, error) {
	t := s.toks[min(s.i, len(s.toks)-1)]
	s.i++
	return t, nil
}

// macroExpander expands the calls of a script's macros.
type macroExpander struct {
	defs  map[string]*macroDef
	d     *Diagnostics
	n     int // expansions so far, for unique variable names
	depth int
}

// expandMacros replaces every call of a macro in the script's probes by
// the macro's body.
func expandMacros(s *Script, defs map[string]*macroDef, d *Diagnostics) {
	if len(defs) == 0 {
		return
	}
	x := &macroExpander{defs: defs, d: d}
	for _, p := range s.Probes {
		x.node(p)
	}
}

// node expands the macros below n, in place.
func (x *macroExpander) node(n Node) {
	rewriteExprs(reflect.ValueOf(n), x.expr)
}

// expr expands e where it is a call of a macro (its arguments were
// expanded before: rewriteExprs goes bottom up).
func (x *macroExpander) expr(e Expr) Expr {
	var name string
	var args []Expr
	switch c := e.(type) {
	case *CallExpr:
		name, args = c.Name, c.Args
	case *Ident:
		if def, ok := x.defs[c.Name]; !ok || len(def.params) > 0 {
			return e
		}
		name = c.Name
	default:
		return e
	}
	def, ok := x.defs[name]
	if !ok {
		return e
	}
	if len(args) != len(def.params) {
		x.d.Add(e.Span(), fmt.Sprintf("macro %s(%s)", name, strings.Join(def.params, ", ")),
			"macro %s takes %d arguments, got %d", name, len(def.params), len(args))
		return e
	}
	if x.depth >= 16 {
		x.d.Add(e.Span(), "a macro may call others, not itself", "macro %s expands too deeply", name)
		return e
	}
	x.n++
	vars, maps, exprs := map[string]string{}, map[string]string{}, map[string]Expr{}
	for i, p := range def.params {
		a := Unparen(args[i])
		switch p[0] {
		case '$':
			// A variable is passed by name (the body may change it); any
			// other expression stands where the body names it, as an
			// expression parameter's does.
			if v, ok := a.(*VarExpr); ok {
				vars[p[1:]] = v.Name
			} else {
				exprs[p] = args[i]
			}
		case '@':
			m, ok := a.(*MapExpr)
			if !ok || len(m.Keys) > 0 {
				x.d.Add(args[i].Span(), "pass a map, e.g. @m", "macro %s expects a map for %s", name, p)
				return e
			}
			maps[p[1:]] = m.Name
		default:
			exprs[p] = args[i]
		}
	}
	body := cloneNode(def.body).(*BlockExpr)
	bad := false
	Inspect(body, func(n Node) bool {
		if a, ok := n.(*AssignStmt); ok && !bad {
			if v, ok := a.Target.(*VarExpr); ok {
				if arg, ok := exprs["$"+v.Name]; ok {
					x.d.Add(arg.Span(), "pass a scratch variable, e.g. $x", "macro %s expects a scratch variable for $%s, which its body changes", name, v.Name)
					bad = true
				}
			}
		}
		return !bad
	})
	Inspect(body, func(n Node) bool {
		switch n := n.(type) {
		case *VarExpr:
			if _, ok := exprs["$"+n.Name]; ok {
				break // replaced by the argument below
			}
			if to, ok := vars[n.Name]; ok {
				n.Name = to
			} else {
				n.Name = fmt.Sprintf("__%s%d_%s", name, x.n, n.Name)
			}
		case *MapExpr:
			to, ok := maps[n.Name]
			if !ok && !bad {
				x.d.Add(n.At, "pass the map to the macro: macro "+name+"(@"+n.Name+", ...)",
					"macro %s uses @%s, which is not one of its parameters", name, n.Name)
				bad = true
			}
			n.Name = to
		}
		return true
	})
	if bad {
		return e
	}
	rewriteExprs(reflect.ValueOf(body), func(in Expr) Expr {
		switch n := in.(type) {
		case *Ident:
			if a, ok := exprs[n.Name]; ok {
				return cloneExpr(a)
			}
		case *VarExpr:
			if a, ok := exprs["$"+n.Name]; ok {
				return cloneExpr(a)
			}
		}
		return in
	})
	body.At = e.Span()
	x.depth++
	x.node(body)
	x.depth--
	return body
}

var exprType = reflect.TypeOf((*Expr)(nil)).Elem()

// rewriteExprsOf is rewriteExprs on a node.
func rewriteExprsOf(n Node, f func(Expr) Expr) { rewriteExprs(reflect.ValueOf(n), f) }

// rewriteExprs replaces, bottom up, every expression below v (a node)
// held in a field or a slice element of type Expr by what f returns.
func rewriteExprs(v reflect.Value, f func(Expr) Expr) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || v.Type() == sourceType {
			return
		}
		rewriteExprs(v.Elem(), f)
	case reflect.Interface:
		if !v.IsNil() {
			rewriteExprs(v.Elem(), f)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fv := v.Field(i)
			if !fv.CanSet() {
				continue
			}
			rewriteExprs(fv, f)
			if fv.Type() == exprType && !fv.IsNil() {
				fv.Set(reflect.ValueOf(f(fv.Interface().(Expr))))
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			ev := v.Index(i)
			rewriteExprs(ev, f)
			if ev.Type() == exprType && !ev.IsNil() {
				ev.Set(reflect.ValueOf(f(ev.Interface().(Expr))))
			}
		}
	}
}
