package lang

import (
	"math"
	"net/netip"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// lowerer turns the participle tree into the AST, checking what the grammar
// cannot: literal values, assignment targets, statement separators, probe specs.
type lowerer struct {
	src   *Source
	diags *Diagnostics
}

func (l *lowerer) span(start, end lexer.Position) Span {
	// participle's EndPos is where the next token starts; pull it back over
	// whitespace so that spans cover exactly the node's text.
	e := end.Offset
	for e > start.Offset && e <= len(l.src.Text) && isSpace(l.src.Text[e-1]) {
		e--
	}
	return Span{Start: Pos{Offset: start.Offset, Line: start.Line, Col: start.Column}, End: l.src.PosAt(e)}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (l *lowerer) probe(g *gProbe) *Probe {
	p := &Probe{At: l.span(g.Pos, g.EndPos)}
	for _, s := range g.Specs {
		p.Specs = append(p.Specs, l.spec(s))
	}
	if g.Pred != nil {
		p.Pred = l.expr(g.Pred)
	}
	p.Body = l.block(g.Body)
	return p
}

func (l *lowerer) block(g *gBlock) *Block {
	b := &Block{At: l.span(g.Pos, g.EndPos), Angle: g.Open == "<"}
	for i, s := range g.Stmts {
		st := l.stmt(s)
		if st == nil {
			continue
		}
		if l.misplacedKeyword(st) {
			// What follows it is the rest of an if: one error says it.
			return b
		}
		b.Stmts = append(b.Stmts, st)
		// A statement ends with ';', a newline, or the block's end.
		if i+1 < len(g.Stmts) && len(s.Semis) == 0 && s.If == nil && s.For == nil && s.While == nil && s.Unroll == nil {
			next := g.Stmts[i+1]
			if l.failedCall(s, next) {
				continue
			}
			if next.Pos.Line == s.EndPos.Line && !strings.Contains(l.src.Text[s.Pos.Offset:next.Pos.Offset], "\n") {
				pos := st.Span().End
				if msg, hint, ok := unsupportedConstruct(l.src.Text, pos.Offset); ok {
					l.diags.Add(st.Span(), hint, "%s", msg)
					continue
				}
				l.diags.Add(Span{Start: pos, End: pos}, "separate statements with ; or a newline", "syntax error: expected \";\" after statement")
			}
		}
	}
	return b
}

// misplacedKeyword reports an if whose condition has no parentheses, or
// an else with no if before it: alone, each reads as a name, and the rest
// of the statement as more statements, which a separator error would
// blame instead.
func (l *lowerer) misplacedKeyword(st Stmt) bool {
	sp := st.Span()
	switch strings.TrimSpace(l.src.Slice(sp)) {
	case "if":
		l.diags.Add(sp, "write the condition in parentheses: if (len > 64) { ... }", "syntax error: if needs its condition in parentheses")
	case "else":
		l.diags.Add(sp, "else follows an if's block: if (COND) { ... } else { ... }", "syntax error: else without if")
	default:
		return false
	}
	return true
}

func (l *lowerer) stmt(g *gStmt) Stmt {
	sp := l.span(g.Pos, g.EndPos)
	if len(g.Semis) > 0 {
		// The span of a statement does not include its terminators.
		t := strings.TrimRight(l.src.Slice(sp), "; \t\r\n")
		sp.End = l.src.PosAt(sp.Start.Offset + len(t))
	}
	if g.If != nil {
		return l.ifStmt(g.If)
	}
	if g.Let != nil {
		return l.let(sp, g.Let)
	}
	if g.For != nil {
		return l.forStmt(g.For)
	}
	if g.While != nil {
		return &WhileStmt{At: l.span(g.While.Pos, g.While.EndPos), Cond: l.expr(g.While.Cond), Body: l.block(g.While.Body)}
	}
	if g.Unroll != nil {
		return &UnrollStmt{At: l.span(g.Unroll.Pos, g.Unroll.EndPos), Count: l.expr(g.Unroll.Count), Body: l.block(g.Unroll.Body)}
	}
	if g.Jump != "" {
		return &JumpStmt{At: sp, Op: g.Jump}
	}
	target := l.expr(g.Target)
	if id, ok := target.(*IncDecExpr); ok && g.Op == "" && g.Incr == "" {
		// `x++;` alone: parsed as an expression, it is the assignment.
		target, g = id.X, &gStmt{Incr: id.Op}
	}
	switch {
	case g.Op != "":
		if id, ok := target.(*Ident); ok && id.Name == "_" && g.Op == "=" {
			// bpftrace 0.26's discard, `_ = has_key(@m, k)`: the value is
			// computed and kept nowhere a script can name ($_ is a name
			// no other variable has: a script's own $_ is another).
			target = &VarExpr{At: id.At, Name: discardVar + strconv.Itoa(id.At.Start.Offset)}
		}
		l.checkTarget(target)
		return &AssignStmt{At: sp, Target: target, Op: g.Op, Value: l.expr(g.Value)}
	case g.Incr != "":
		l.checkTarget(target)
		op := "+="
		if g.Incr == "--" {
			op = "-="
		}
		end := sp.End
		one := &IntLit{At: Span{Start: end, End: end}, Value: 1}
		return &AssignStmt{At: sp, Target: target, Op: op, Value: one}
	}
	return &ExprStmt{At: sp, X: target}
}

func (l *lowerer) let(sp Span, g *gLet) Stmt {
	// The variable is the token after "let".
	at := l.src.Text[g.Pos.Offset:]
	off := g.Pos.Offset + strings.Index(at, g.Var)
	v := &VarExpr{At: Span{Start: l.src.PosAt(off), End: l.src.PosAt(off + len(g.Var))}, Name: g.Var[1:]}
	if name := v.Name; name == "#" || name[0] >= '0' && name[0] <= '9' {
		l.diags.Add(v.At, "declare a scratch variable: let $name", "cannot declare the positional parameter $%s", name)
	}
	s := &LetStmt{At: sp, Var: v}
	if t := g.Type; t != nil {
		s.Type, s.Ptr, s.TypeSpan = t.IntTy, len(t.Stars), l.span(t.Pos, t.EndPos)
		if t.Tag != "" {
			s.Type = t.Tag + " " + t.Name
		}
	}
	if g.Value != nil {
		s.Value = l.expr(g.Value)
	}
	return s
}

// deleteKeyArg turns bpftrace 0.2x's delete(@m, key) into the
// delete(@m[key]) it means: the element is a map expression spanning
// `@m, key`, so the checker and code generator see one form.
func deleteKeyArg(c *CallExpr) *CallExpr {
	if c.Name != "delete" && c.Name != "has_key" || len(c.Args) != 2 {
		return c
	}
	m, ok := c.Args[0].(*MapExpr)
	if !ok || len(m.Keys) > 0 {
		return c
	}
	key := c.Args[1]
	elem := &MapExpr{At: Span{Start: m.At.Start, End: key.Span().End}, Name: m.Name, Keys: []Expr{key}}
	c.Args = []Expr{elem}
	return c
}

// discardVar names the variables `_ = value` assigns, one for each
// place (each may hold its own type): names no script can write ($ and
// a blank).
const discardVar = " discard"

func (l *lowerer) checkTarget(e Expr) {
	switch e.(type) {
	case *MapExpr, *VarExpr:
		return
	case *PosParam:
		l.diags.Add(e.Span(), "positional parameters are read-only; copy into a $variable", "cannot assign to %s", l.src.Slice(e.Span()))
	default:
		l.diags.Add(e.Span(), "assign to a map (@name) or a scratch variable ($name)", "cannot assign to %s", l.src.Slice(e.Span()))
	}
}

func (l *lowerer) ifStmt(g *gIf) *IfStmt {
	s := &IfStmt{At: l.span(g.Pos, g.EndPos), Cond: l.ifCond(g), Then: l.block(g.Then)}
	switch {
	case g.ElseIf != nil:
		s.Else = l.ifStmt(g.ElseIf)
	case g.Else != nil:
		s.Else = l.block(g.Else)
	}
	return s
}

// ifCond is an if's condition, in parentheses or bare.
func (l *lowerer) ifCond(g *gIf) Expr {
	if g.Bare != nil {
		return l.unary(g.Bare)
	}
	return l.expr(g.Cond)
}

func (l *lowerer) expr(g *gExpr) Expr {
	switch {
	case g.Block != nil:
		return l.blockExpr(g.Block)
	case g.IfX != nil:
		return l.ifExpr(g.IfX)
	}
	cond := l.binary(g.Cond)
	switch {
	case g.Else == nil:
		return cond
	case g.Then == nil:
		// `c ?: e` is `c ? c : e` (c read twice, as bpftrace's does).
		return &CondExpr{At: l.span(g.Pos, g.EndPos), Cond: cond, Then: cloneExpr(cond), Else: l.expr(g.Else)}
	}
	return &CondExpr{At: l.span(g.Pos, g.EndPos), Cond: cond, Then: l.expr(g.Then), Else: l.expr(g.Else)}
}

// precedence is C's, higher binds tighter; `in` sits with the relations.
var precedence = map[string]int{
	"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5,
	"==": 6, "!=": 6,
	"<": 7, "<=": 7, ">": 7, ">=": 7, "in": 7,
	"<<": 8, ">>": 8,
	"+": 9, "-": 9,
	"*": 10, "/": 10, "%": 10,
}

// binary folds the flat operand/operator list by precedence climbing; all
// binary operators are left-associative.
func (l *lowerer) binary(g *gBinary) Expr {
	operands := []Expr{l.unary(g.Head)}
	for _, t := range g.Tail {
		operands = append(operands, l.unary(t.X))
	}
	i := 0
	next := func() Expr { e := operands[i]; i++; return e }
	var climb func(lhs Expr, minPrec int, k *int) Expr
	climb = func(lhs Expr, minPrec int, k *int) Expr {
		for *k < len(g.Tail) && precedence[g.Tail[*k].Op] >= minPrec {
			opTok := g.Tail[*k]
			prec := precedence[opTok.Op]
			*k++
			rhs := next()
			for *k < len(g.Tail) && precedence[g.Tail[*k].Op] > prec {
				rhs = climb(rhs, prec+1, k)
			}
			opStart := Pos{Offset: opTok.Pos.Offset, Line: opTok.Pos.Line, Col: opTok.Pos.Column}
			opEnd := l.src.PosAt(opTok.Pos.Offset + len(opTok.Op))
			lhs = &BinaryExpr{
				At: Span{Start: lhs.Span().Start, End: rhs.Span().End},
				Op: opTok.Op, OpSpan: Span{Start: opStart, End: opEnd}, X: lhs, Y: rhs,
			}
		}
		return lhs
	}
	k := 0
	return climb(next(), 1, &k)
}

func (l *lowerer) unary(g *gUnary) Expr {
	if g.Postfix != nil {
		return l.postfix(g.Postfix)
	}
	if c := g.Cast; c != nil {
		ty := c.IntTy
		if c.Tag != "" {
			ty = c.Tag + " " + c.Name
		}
		return l.cast(c, ty)
	}
	x := l.unary(g.X)
	if g.Op == "++" || g.Op == "--" {
		return l.incDec(l.span(g.Pos, g.EndPos), g.Op, true, x)
	}
	return &UnaryExpr{At: l.span(g.Pos, g.EndPos), Op: g.Op, X: x}
}

func (l *lowerer) postfix(g *gPostfix) Expr {
	x := l.primary(g.X)
	if _, isInt := x.(*IntLit); isInt && len(g.Sels) > 0 && g.Sels[0].Elem != "" {
		l.addressTypo(x, g.Sels)
	}
	for _, s := range g.Sels {
		sp := Span{Start: x.Span().Start, End: l.span(s.Pos, s.EndPos).End}
		nameSpan := l.span(s.Pos, s.EndPos)
		switch {
		case s.Arrow != "":
			nameSpan.Start = l.src.PosAt(nameSpan.End.Offset - len(s.Arrow))
			x = &FieldExpr{At: sp, X: x, Name: s.Arrow, NameSpan: nameSpan, Arrow: true}
		case s.Dot != "":
			nameSpan.Start = l.src.PosAt(nameSpan.End.Offset - len(s.Dot))
			x = &FieldExpr{At: sp, X: x, Name: s.Dot, NameSpan: nameSpan}
		case s.Elem != "":
			// A tuple's element, $t.0: the checker tells it from a member.
			nameSpan.Start = l.src.PosAt(nameSpan.End.Offset - len(s.Elem))
			x = &FieldExpr{At: sp, X: x, Name: s.Elem, NameSpan: nameSpan}
		default:
			x = &IndexExpr{At: sp, X: x, Index: l.expr(s.Index)}
		}
	}
	if g.Incr != "" {
		x = l.incDec(l.span(g.Pos, g.EndPos), g.Incr, false, x)
	}
	return x
}

func (l *lowerer) primary(g *gPrimary) Expr {
	sp := l.span(g.Pos, g.EndPos)
	switch {
	case g.Str != nil:
		v, err := unquote(*g.Str)
		if err != "" {
			l.diags.Add(sp, "escapes are \\n \\t \\r \\\\ \\\" \\0 \\xHH and octal \\NNN", "%s", err)
		}
		return &StrLit{At: sp, Value: v}
	case g.BadStr != nil:
		l.diags.Add(sp, "close it with \" on the same line", "unterminated string")
		return &StrLit{At: sp}
	case g.IP != nil:
		return l.ipLit(sp, *g.IP)
	case g.Int != nil:
		v, err := parseInt(*g.Int)
		if err != nil {
			l.diags.Add(sp, "integers are 64-bit: at most 18446744073709551615", "integer literal %s out of range", *g.Int)
		}
		return &IntLit{At: sp, Value: v}
	case g.Var != nil:
		name := (*g.Var)[1:]
		if name == "#" {
			return &PosParam{At: sp, Count: true}
		}
		if name != "" && name[0] >= '0' && name[0] <= '9' {
			n, err := strconv.Atoi(name)
			if err != nil || n > 1<<16 {
				l.diags.Add(sp, "positional parameters are $1, $2, ... for the arguments after the script", "positional parameter $%s out of range", name)
				return &PosParam{At: sp, N: 1 << 16}
			}
			if n == 0 {
				l.diags.Add(sp, "positional parameters start at $1", "no positional parameter $0")
			}
			return &PosParam{At: sp, N: n}
		}
		return &VarExpr{At: sp, Name: name}
	case g.Map != nil:
		m := &MapExpr{At: sp, Name: (*g.Map)[1:]}
		for _, k := range g.MapKeys {
			m.Keys = append(m.Keys, l.expr(k))
		}
		return m
	case g.TypeOf != nil:
		return l.typeOf(sp, g.TypeOf)
	case g.Ident != nil:
		if g.Call == nil {
			return &Ident{At: sp, Name: *g.Ident}
		}
		c := &CallExpr{At: sp, Name: *g.Ident, NameSpan: Span{Start: sp.Start, End: l.src.PosAt(sp.Start.Offset + len(*g.Ident))}}
		for _, a := range g.Args {
			c.Args = append(c.Args, l.expr(a))
		}
		return deleteKeyArg(c)
	case g.Paren != nil:
		return l.paren(sp, g.Paren)
	}
	l.diags.Add(sp, "", "syntax error: expected an expression")
	return &IntLit{At: sp}
}

func (l *lowerer) ipLit(sp Span, text string) Expr {
	if strings.Contains(text, "/") {
		p, err := netip.ParsePrefix(text)
		if err != nil {
			l.diags.Add(sp, "a prefix is ADDRESS/BITS, e.g. 10.0.0.0/8 or fd00::/8", "invalid address prefix %s", text)
			return &CIDRLit{At: sp}
		}
		return &CIDRLit{At: sp, Prefix: p.Masked()}
	}
	a, err := netip.ParseAddr(text)
	if err != nil {
		l.diags.Add(sp, "IPv4 addresses have four parts of 0-255", "invalid address %s", text)
		return &IPLit{At: sp}
	}
	return &IPLit{At: sp, Addr: a}
}

// unquote decodes a string literal's C escapes; it returns an error message
// for an unknown escape.
func unquote(q string) (string, string) {
	s := q[1 : len(q)-1]
	if strings.IndexByte(s, '\\') < 0 {
		return s, ""
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'e':
			b.WriteByte(0x1b)
		case '\\', '"', '\'', '?':
			b.WriteByte(e)
		case 'x':
			j := i + 1
			for j < len(s) && j < i+3 && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				return b.String(), `invalid escape \x: expected hex digits`
			}
			v, _ := strconv.ParseUint(s[i+1:j], 16, 8)
			b.WriteByte(byte(v))
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 16)
			if v > 255 {
				return b.String(), "octal escape out of range: \\" + s[i:j]
			}
			b.WriteByte(byte(v))
			i = j - 1
		default:
			return b.String(), "unknown escape \\" + string(e)
		}
	}
	return b.String(), ""
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// parseInt parses an integer literal: decimal, 0x hex, or bpftrace's
// exponent form 1e6.
func parseInt(text string) (uint64, error) {
	text, suffix := splitIntSuffix(text)
	v, err := parseNumber(text)
	if err != nil {
		return 0, err
	}
	return scaleInt(v, suffix)
}

// parseNumber reads an integer literal without its suffix: decimal,
// hex, octal (a leading 0, as C reads it) or with an exponent (1e6).
func parseNumber(text string) (uint64, error) {
	mant, exp, ok := strings.Cut(text, "e")
	if !ok || strings.HasPrefix(text, "0x") || strings.HasPrefix(text, "0X") {
		return strconv.ParseUint(text, 0, 64)
	}
	v, err := strconv.ParseUint(mant, 10, 64)
	if err != nil {
		return 0, err
	}
	e, err := strconv.Atoi(exp)
	if err != nil {
		return 0, err
	}
	for range e {
		if v > math.MaxUint64/10 {
			return 0, strconv.ErrRange
		}
		v *= 10
	}
	return v, nil
}

// typeOf lowers sizeof(...) and offsetof(..., member).
func (l *lowerer) typeOf(sp Span, g *gTypeOf) Expr {
	e := &TypeOfExpr{At: sp, Op: g.Kw, Fields: g.Fields}
	if t := g.Type; t != nil {
		e.Type, e.Ptr, e.TypeSpan = t.IntTy, len(t.Stars), l.span(t.Pos, t.EndPos)
		if t.Tag != "" {
			e.Type = t.Tag + " " + t.Name
		}
	} else {
		e.X = l.expr(g.X)
	}
	switch {
	case g.Kw == "sizeof" && len(g.Fields) > 0:
		l.diags.Add(sp, "sizeof takes a type or an expression: sizeof(struct sk_buff), sizeof(skb->len); offsetof(struct sk_buff, len) gives a member's offset", "sizeof takes one argument")
	case g.Kw == "offsetof" && len(g.Fields) == 0:
		l.diags.Add(sp, "name the member: offsetof(struct sk_buff, len), offsetof(struct sock, __sk_common.skc_family)", "offsetof needs a member")
	}
	return e
}
