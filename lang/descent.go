package lang

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// descent parses the grammar of grammar.go by recursive descent: one
// method per g* type, each the transliteration of the type's tags, with
// participle's rules for choosing a branch. It is the fast path of
// rangeParser.parse (participle, through reflection, spent some fifty
// allocations a token on the branches it tried); participle stays the
// reference. A range descent does not accept is parsed again by
// participle, which then reports the error: diagnostics are its own.
//
// participle's rules, kept here:
//   - alternatives ( a | b ) are tried in order, the first that matches wins;
//     repetitions x* and options x? are greedy; a failed branch rewinds;
//   - a branch that fails more than lookahead tokens past where it started
//     is an error, not a rewind (UseLookahead in parse.go): descent gives
//     up (errStop) and lets participle report it;
//   - a literal "x" matches any token whose text is x; a name matches by
//     token type; captures are kept only on the branch that was taken;
//   - Pos is the first token's position, EndPos the next token's.
//
// descent_test.go compares the two parsers' trees on the test corpus and
// under fuzzing (FuzzDescent), and keeps testdata/grammar.golden: a
// change to the grammar shows there, and needs the same change here.
type descent struct {
	toks  []lexer.Token // ending with EOF
	i     int
	nodes *descentNodes
}

// descentNodes are the nodes of descent's trees, from slabs: a range's
// tree is dead once lowered, and the next range reuses its memory.
type descentNodes struct {
	probes    slab[gProbe]
	specs     slab[gSpec]
	blocks    slab[gBlock]
	stmts     slab[gStmt]
	ifs       slab[gIf]
	fors      slab[gFor]
	whiles    slab[gWhile]
	unrolls   slab[gUnroll]
	lets      slab[gLet]
	types     slab[gType]
	exprs     slab[gExpr]
	binaries  slab[gBinary]
	opArgs    slab[gOpArg]
	unaries   slab[gUnary]
	casts     slab[gCast]
	typeOfs   slab[gTypeOf]
	postfixes slab[gPostfix]
	selectors slab[gSelector]
	primaries slab[gPrimary]
	parens    slab[gParen]
	elems     slab[gElem]
	strings   slab[string]
}

func (n *descentNodes) reset() {
	n.probes.reset()
	n.specs.reset()
	n.blocks.reset()
	n.stmts.reset()
	n.ifs.reset()
	n.fors.reset()
	n.whiles.reset()
	n.unrolls.reset()
	n.lets.reset()
	n.types.reset()
	n.exprs.reset()
	n.binaries.reset()
	n.opArgs.reset()
	n.unaries.reset()
	n.casts.reset()
	n.typeOfs.reset()
	n.postfixes.reset()
	n.selectors.reset()
	n.primaries.reset()
	n.parens.reset()
	n.elems.reset()
	n.strings.reset()
}

// lookahead is participle's UseLookahead in parse.go.
const lookahead = 4

// errStop abandons a parse that participle would have stopped with an error.
type errStop struct{}

// parseScript parses the tokens as a gScript that takes all of them; false
// when participle would not accept them, or descent cannot tell.
func (p *descent) parseScript() (g *gScript, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, stop := r.(errStop); !stop {
				panic(r)
			}
			g, ok = nil, false
		}
	}()
	g = &gScript{}
	// `@@*`
	for n := 0; ; n++ {
		p.iterate(n)
		start := p.i
		pr, ok := p.probe()
		if !p.taken(ok, start) {
			break
		}
		g.Probes = append(g.Probes, pr)
	}
	if !p.peek().EOF() {
		return nil, false
	}
	return g, true
}

func (p *descent) peek() *lexer.Token { return &p.toks[p.i] }

// next consumes a token; EOF stays.
func (p *descent) next() string {
	t := &p.toks[p.i]
	if !t.EOF() {
		p.i++
	}
	return t.Value
}

// taken ends a branch that started at token start: on failure it rewinds
// to start, or stops the parse when the branch got further than
// participle's lookahead.
func (p *descent) taken(ok bool, start int) bool {
	if !ok {
		if p.i > start+lookahead {
			panic(errStop{})
		}
		p.i = start
	}
	return ok
}

// iterate stops a repetition where participle's does, at MaxIterations.
func (p *descent) iterate(n int) {
	if n >= participle.MaxIterations {
		panic(errStop{})
	}
}

// at reports whether the literal s is next. (The parse methods look before
// they allocate their node: most of the nodes tried do not match.)
func (p *descent) at(s string) bool {
	t := p.peek()
	return t.Value == s && !t.EOF()
}

// lit matches the literal s.
func (p *descent) lit(s string) bool {
	if !p.at(s) {
		return false
	}
	p.next()
	return true
}

// oneOf matches one of the literals and returns its text.
func (p *descent) oneOf(lits []string) (string, bool) {
	v := p.peek().Value
	if p.peek().EOF() {
		return "", false
	}
	for _, s := range lits {
		if v == s {
			p.next()
			return v, true
		}
	}
	return "", false
}

// ref matches a token of type t and returns its text.
func (p *descent) ref(t lexer.TokenType) (string, bool) {
	if p.peek().Type != t {
		return "", false
	}
	return p.next(), true
}

// refPtr is ref for a *string field.
func (p *descent) refPtr(t lexer.TokenType) *string {
	v, ok := p.ref(t)
	if !ok {
		return nil
	}
	return p.nodes.strings.new(v)
}

// gProbe: `@@ ( "," @@ )* ( PredOpen @@ PredClose )? @@`
func (p *descent) probe() (*gProbe, bool) {
	g := p.nodes.probes.new(gProbe{Pos: p.peek().Pos})
	s, ok := p.spec()
	if !ok {
		return nil, false
	}
	g.Specs = append(g.Specs, s)
	for n := 0; ; n++ {
		p.iterate(n)
		start := p.i
		var s *gSpec
		ok := p.lit(",")
		if ok {
			s, ok = p.spec()
		}
		if !p.taken(ok, start) {
			break
		}
		g.Specs = append(g.Specs, s)
	}
	start := p.i
	var pred *gExpr
	_, ok = p.ref(tPredOpen)
	if ok {
		pred, ok = p.expr()
	}
	if ok {
		_, ok = p.ref(tPredClose)
	}
	if p.taken(ok, start) {
		g.Pred = pred
	}
	if g.Body, ok = p.block(); !ok {
		return nil, false
	}
	g.EndPos = p.peek().Pos
	return g, true
}

// gSpec: `@ProbeSpec`
func (p *descent) spec() (*gSpec, bool) {
	g := p.nodes.specs.new(gSpec{Pos: p.peek().Pos})
	var ok bool
	if g.Text, ok = p.ref(tProbeSpec); !ok {
		return nil, false
	}
	g.EndPos = p.peek().Pos
	return g, true
}

// gBlock: `( @LBrace | @AngleOpen ) @@* ( @RBrace | @AngleClose )`
func (p *descent) block() (*gBlock, bool) {
	g := p.nodes.blocks.new(gBlock{Pos: p.peek().Pos})
	var ok bool
	if g.Open, ok = p.ref(tLBrace); !ok {
		if g.Open, ok = p.ref(tAngleOpen); !ok {
			return nil, false
		}
	}
	for n := 0; ; n++ {
		p.iterate(n)
		start := p.i
		s, ok := p.stmt()
		if !p.taken(ok, start) {
			break
		}
		g.Stmts = append(g.Stmts, s)
	}
	if g.Close, ok = p.ref(tRBrace); !ok {
		if g.Close, ok = p.ref(tAngleClose); !ok {
			return nil, false
		}
	}
	g.EndPos = p.peek().Pos
	return g, true
}

var (
	assignOps = []string{"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
	incrOps   = []string{"++", "--"}
	jumpWords = []string{"break", "continue", "return"}
)

// gStmt: `( @@ | @@ | @@ | @@ | @@ | @(jumpWords) | @@ ( @(assignOps) @@ | @(incrOps) )? ) @";"*`
func (p *descent) stmt() (*gStmt, bool) {
	g := p.nodes.stmts.new(gStmt{Pos: p.peek().Pos})
	start := p.i
	ifs, ok := p.ifStmt()
	if p.taken(ok, start) {
		g.If = ifs
	} else if f, ok := p.forStmt(); p.taken(ok, start) {
		g.For = f
	} else if w, ok := p.whileStmt(); p.taken(ok, start) {
		g.While = w
	} else if u, ok := p.unroll(); p.taken(ok, start) {
		g.Unroll = u
	} else if let, ok := p.let(); p.taken(ok, start) {
		g.Let = let
	} else if jump, ok := p.oneOf(jumpWords); ok {
		g.Jump = jump
	} else {
		target, ok := p.expr()
		if !p.taken(ok, start) {
			return nil, false
		}
		g.Target = target
		// ( ... )? around ( a | b ): both branches start here.
		start := p.i
		op, ok := p.oneOf(assignOps)
		var value *gExpr
		if ok {
			value, ok = p.expr()
		}
		if p.taken(ok, start) {
			g.Op, g.Value = op, value
		} else if incr, ok := p.oneOf(incrOps); ok {
			g.Incr = incr
		}
	}
	for n := 0; ; n++ {
		p.iterate(n)
		if !p.lit(";") {
			break
		}
		g.Semis = append(g.Semis, ";")
	}
	g.EndPos = p.peek().Pos
	return g, true
}

// gLet: `"let" @Var ( ":" @@ )? ( "=" @@ )?`
func (p *descent) let() (*gLet, bool) {
	if !p.at("let") {
		return nil, false
	}
	g := p.nodes.lets.new(gLet{Pos: p.peek().Pos})
	p.next()
	var ok bool
	if g.Var, ok = p.ref(tVar); !ok {
		return nil, false
	}
	start := p.i
	var ty *gType
	ok = p.lit(":")
	if ok {
		ty, ok = p.typ()
	}
	if p.taken(ok, start) {
		g.Type = ty
	}
	start = p.i
	var value *gExpr
	ok = p.lit("=")
	if ok {
		value, ok = p.expr()
	}
	if p.taken(ok, start) {
		g.Value = value
	}
	g.EndPos = p.peek().Pos
	return g, true
}

// gType: `( @(tagKeywords) @Ident | @(intTypes) ) @"*"*`
func (p *descent) typ() (*gType, bool) {
	g := p.nodes.types.new(gType{Pos: p.peek().Pos})
	start := p.i
	tag, ok := p.oneOf(tagKeywords)
	var name string
	if ok {
		name, ok = p.ref(tIdent)
	}
	switch {
	case p.taken(ok, start):
		g.Tag, g.Name = tag, name
	default:
		ty, ok := p.oneOf(intTypes)
		if !ok {
			return nil, false
		}
		g.IntTy = ty
	}
	for n := 0; ; n++ {
		p.iterate(n)
		if !p.lit("*") {
			break
		}
		g.Stars = append(g.Stars, "*")
	}
	g.EndPos = p.peek().Pos
	return g, true
}

// gFor: `"for" @"("? @Var ":" @@ ( ".." @@ )? @")"? @@`
func (p *descent) forStmt() (*gFor, bool) {
	if !p.at("for") {
		return nil, false
	}
	g := p.nodes.fors.new(gFor{Pos: p.peek().Pos})
	p.next()
	if p.at("(") {
		g.Open = p.next()
	}
	var ok bool
	if g.Var, ok = p.ref(tVar); !ok {
		return nil, false
	}
	if !p.lit(":") {
		return nil, false
	}
	if g.Iter, ok = p.unary(); !ok {
		return nil, false
	}
	start := p.i
	var end *gUnary
	ok = p.lit("..")
	if ok {
		end, ok = p.unary()
	}
	if p.taken(ok, start) {
		g.End = end
	}
	if p.at(")") {
		g.Close = p.next()
	}
	if g.Body, ok = p.block(); !ok {
		return nil, false
	}
	g.EndPos = p.peek().Pos
	return g, true
}

// gWhile: `"while" "(" @@ ")" @@`
func (p *descent) whileStmt() (*gWhile, bool) {
	if !p.at("while") {
		return nil, false
	}
	g := p.nodes.whiles.new(gWhile{Pos: p.peek().Pos})
	p.next()
	var ok bool
	if g.Cond, g.Body, ok = p.headBlock(); !ok {
		return nil, false
	}
	g.EndPos = p.peek().Pos
	return g, true
}

// gUnroll: `"unroll" "(" @@ ")" @@`
func (p *descent) unroll() (*gUnroll, bool) {
	if !p.at("unroll") {
		return nil, false
	}
	g := p.nodes.unrolls.new(gUnroll{Pos: p.peek().Pos})
	p.next()
	var ok bool
	if g.Count, g.Body, ok = p.headBlock(); !ok {
		return nil, false
	}
	g.EndPos = p.peek().Pos
	return g, true
}

// headBlock parses `"(" @@ ")" @@`: a parenthesised expression, then a
// block.
func (p *descent) headBlock() (*gExpr, *gBlock, bool) {
	if !p.lit("(") {
		return nil, nil, false
	}
	x, ok := p.expr()
	if !ok || !p.lit(")") {
		return nil, nil, false
	}
	b, ok := p.block()
	return x, b, ok
}

// gIf: `"if" ( "(" @@ ")" | @@ ) @@ ( "else" ( @@ | @@ ) )?`
func (p *descent) ifStmt() (*gIf, bool) {
	if !p.at("if") {
		return nil, false
	}
	g := p.nodes.ifs.new(gIf{Pos: p.peek().Pos})
	p.next()
	if !p.ifHead(g) {
		return nil, false
	}
	start := p.i
	if p.lit("else") {
		alt := p.i
		if elseIf, ok := p.ifStmt(); p.taken(ok, alt) {
			g.ElseIf = elseIf
		} else if els, ok := p.block(); p.taken(ok, alt) {
			g.Else = els
		} else {
			p.taken(false, start)
		}
	}
	g.EndPos = p.peek().Pos
	return g, true
}

// ifHead parses an if's condition and block: `( "(" @@ ")" | @@ ) @@`,
// the condition in parentheses, or, as bpftrace 0.27's tools write it
// (`if $memcg { ... }`), a unary expression without them.
func (p *descent) ifHead(g *gIf) bool {
	var ok bool
	if p.lit("(") {
		if g.Cond, ok = p.expr(); !ok || !p.lit(")") {
			return false
		}
	} else if g.Bare, ok = p.unary(); !ok {
		return false
	}
	g.Then, ok = p.block()
	return ok
}

// gExpr: `( @@ | @@ | @@ ( "?" @@ ":" @@ )? )`
func (p *descent) expr() (*gExpr, bool) {
	g := p.nodes.exprs.new(gExpr{Pos: p.peek().Pos})
	start := p.i
	if b, ok := p.block(); p.taken(ok, start) {
		g.Block = b
		g.EndPos = p.peek().Pos
		return g, true
	}
	if ifx, ok := p.ifStmt(); p.taken(ok, start) {
		g.IfX = ifx
		g.EndPos = p.peek().Pos
		return g, true
	}
	var ok bool
	if g.Cond, ok = p.binary(); !ok {
		return nil, false
	}
	start = p.i
	var then, els *gExpr
	ok = p.lit("?")
	if ok && !p.at(":") {
		// `c ?: e` (bpftrace 0.26) has no middle operand: c is it.
		then, ok = p.expr()
	}
	if ok {
		ok = p.lit(":")
	}
	if ok {
		els, ok = p.expr()
	}
	if p.taken(ok, start) {
		g.Then, g.Else = then, els
	}
	g.EndPos = p.peek().Pos
	return g, true
}

// gBinary: `@@ @@*`
func (p *descent) binary() (*gBinary, bool) {
	g := p.nodes.binaries.new(gBinary{Pos: p.peek().Pos})
	var ok bool
	if g.Head, ok = p.unary(); !ok {
		return nil, false
	}
	for n := 0; ; n++ {
		p.iterate(n)
		start := p.i
		t, ok := p.opArg()
		if !p.taken(ok, start) {
			break
		}
		g.Tail = append(g.Tail, t)
	}
	g.EndPos = p.peek().Pos
	return g, true
}

var binaryOps = []string{"||", "&&", "|", "^", "&", "==", "!=", "<=", ">=", "<", ">", "in", "<<", ">>", "+", "-", "*", "/", "%"}

// gOpArg: `@(binaryOps) @@`
func (p *descent) opArg() (*gOpArg, bool) {
	pos := p.peek().Pos
	op, ok := p.oneOf(binaryOps)
	if !ok {
		return nil, false
	}
	g := p.nodes.opArgs.new(gOpArg{Pos: pos, Op: op})
	if g.X, ok = p.unary(); !ok {
		return nil, false
	}
	g.EndPos = p.peek().Pos
	return g, true
}

var unaryOps = []string{"!", "~", "-", "+", "*", "&", "++", "--"}

// gUnary: `( @(unaryOps) @@ | @@ | @@ )`
func (p *descent) unary() (*gUnary, bool) {
	g := p.nodes.unaries.new(gUnary{Pos: p.peek().Pos})
	start := p.i
	op, ok := p.oneOf(unaryOps)
	var x *gUnary
	if ok {
		x, ok = p.unary()
	}
	switch {
	case p.taken(ok, start):
		g.Op, g.X = op, x
	default:
		if c, ok := p.cast(); p.taken(ok, start) {
			g.Cast = c
		} else if pf, ok := p.postfix(); p.taken(ok, start) {
			g.Postfix = pf
		} else {
			return nil, false
		}
	}
	g.EndPos = p.peek().Pos
	return g, true
}

var (
	tagKeywords = []string{"struct", "union"}
	// castTagKeywords: a cast may also name an enum, (enum BAZ)x.
	castTagKeywords = []string{"struct", "union", "enum"}
	intTypes        = []string{"uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"}
	castTypes       = append(intTypes[:len(intTypes):len(intTypes)], "bool", "string",
		"uint8_t", "uint16_t", "uint32_t", "uint64_t", "int8_t", "int16_t", "int32_t", "int64_t")
)

// gCast: `"(" ( @(castTagKeywords) @Ident | @(intTypes) ) @"*"* ")" @@`
func (p *descent) cast() (*gCast, bool) {
	if !p.at("(") {
		return nil, false
	}
	g := p.nodes.casts.new(gCast{Pos: p.peek().Pos})
	p.next()
	start := p.i
	tag, ok := p.oneOf(castTagKeywords)
	var name string
	if ok {
		name, ok = p.ref(tIdent)
	}
	var ty string
	switch {
	case p.taken(ok, start):
		g.Tag, g.Name = tag, name
	default:
		if ty, ok = p.oneOf(castTypes); !ok {
			return nil, false
		}
		g.IntTy = ty
	}
	for n := 0; ; n++ {
		p.iterate(n)
		if !p.lit("*") {
			break
		}
		g.Stars = append(g.Stars, "*")
	}
	// ( @"[" @Int? "]" )?
	if at := p.i; p.at("[") {
		open := p.next()
		n, _ := p.ref(tInt)
		if p.taken(p.lit("]"), at) {
			g.Open, g.Len = open, n
		}
	}
	if !p.lit(")") {
		return nil, false
	}
	if g.X, ok = p.unary(); !ok {
		return nil, false
	}
	g.EndPos = p.peek().Pos
	return g, true
}

// gPostfix: `@@ @@* @(incrOps)?`
func (p *descent) postfix() (*gPostfix, bool) {
	g := p.nodes.postfixes.new(gPostfix{Pos: p.peek().Pos})
	var ok bool
	if g.X, ok = p.primary(); !ok {
		return nil, false
	}
	for n := 0; ; n++ {
		p.iterate(n)
		start := p.i
		s, ok := p.selector()
		if !p.taken(ok, start) {
			break
		}
		g.Sels = append(g.Sels, s)
	}
	if incr, ok := p.oneOf(incrOps); ok {
		g.Incr = incr
	}
	g.EndPos = p.peek().Pos
	return g, true
}

// gSelector: `( "->" @Ident | "." @Ident | "." @Int | "[" @@ "]" )`
func (p *descent) selector() (*gSelector, bool) {
	if !p.at("->") && !p.at(".") && !p.at("[") {
		return nil, false
	}
	g := p.nodes.selectors.new(gSelector{Pos: p.peek().Pos})
	start := p.i
	var ok bool
	if p.lit("->") {
		g.Arrow, ok = p.ref(tIdent)
	}
	if !p.taken(ok, start) {
		if p.lit(".") {
			g.Dot, ok = p.ref(tIdent)
		}
		if !p.taken(ok, start) && p.lit(".") {
			g.Elem, ok = p.ref(tInt)
		}
		if !p.taken(ok, start) {
			var index *gExpr
			if p.lit("[") {
				if index, ok = p.expr(); ok {
					ok = p.lit("]")
				}
			}
			if !p.taken(ok, start) {
				return nil, false
			}
			g.Index = index
		}
	}
	g.EndPos = p.peek().Pos
	return g, true
}

// gPrimary: `( @String | @BadString | @( IPv6 | IPv4 ) | @Int | @Var
// | @Map ( "[" @@ ( "," @@ )* "]" )? | @Ident ( @"(" ( @@ ( "," @@ )* )? ")" )?
// | @@ )`
func (p *descent) primary() (*gPrimary, bool) {
	g := p.nodes.primaries.new(gPrimary{Pos: p.peek().Pos})
	switch t := p.peek().Type; t {
	case tString:
		g.Str = p.refPtr(t)
	case tBadString:
		g.BadStr = p.refPtr(t)
	case tIPv6, tIPv4:
		g.IP = p.refPtr(t)
	case tInt:
		g.Int = p.refPtr(t)
	case tVar:
		g.Var = p.refPtr(t)
	case tMap:
		g.Map = p.refPtr(t)
		start := p.i
		keys, ok := p.list("[", "]", true)
		if p.taken(ok, start) {
			g.MapKeys = keys
		}
	case tIdent:
		at := p.i
		if to, ok := p.typeOf(); p.taken(ok, at) {
			g.TypeOf = to
			break
		}
		g.Ident = p.refPtr(t)
		start := p.i
		if p.lit("(") {
			args, ok := p.list("", ")", false)
			if p.taken(ok, start) {
				g.Call, g.Args = p.nodes.strings.new("("), args
			}
		}
	default:
		start := p.i
		paren, ok := p.paren()
		if !p.taken(ok, start) {
			return nil, false
		}
		g.Paren = paren
	}
	g.EndPos = p.peek().Pos
	return g, true
}

// gParen: `"(" ( @@ ( "," @@ )* @","? )? ")"`
func (p *descent) paren() (*gParen, bool) {
	if !p.at("(") {
		return nil, false
	}
	g := p.nodes.parens.new(gParen{Pos: p.peek().Pos})
	p.next()
	start := p.i
	if first, ok := p.elem(); p.taken(ok, start) {
		g.Elems = append(g.Elems, first)
		for n := 0; ; n++ {
			p.iterate(n)
			start := p.i
			var e *gElem
			ok := p.lit(",")
			if ok {
				e, ok = p.elem()
			}
			if !p.taken(ok, start) {
				break
			}
			g.Elems = append(g.Elems, e)
		}
		if p.at(",") {
			g.Comma = p.next()
		}
	}
	if !p.lit(")") {
		return nil, false
	}
	g.EndPos = p.peek().Pos
	return g, true
}

// gElem: `( @Ident "=" )? @@`
func (p *descent) elem() (*gElem, bool) {
	g := p.nodes.elems.new(gElem{Pos: p.peek().Pos})
	start := p.i
	name, ok := p.ref(tIdent)
	if ok {
		ok = p.lit("=")
	}
	if p.taken(ok, start) {
		g.Name = name
	}
	if g.X, ok = p.expr(); !ok {
		return nil, false
	}
	g.EndPos = p.peek().Pos
	return g, true
}

var typeOfKeywords = []string{"sizeof", "offsetof"}

// gTypeOf: `@( "sizeof" | "offsetof" ) "(" ( @@ | @@ ) ( "," @Ident ( "."
// @Ident )* )? ")"`
func (p *descent) typeOf() (*gTypeOf, bool) {
	if !p.at("sizeof") && !p.at("offsetof") {
		return nil, false
	}
	g := p.nodes.typeOfs.new(gTypeOf{Pos: p.peek().Pos})
	g.Kw, _ = p.oneOf(typeOfKeywords)
	if !p.lit("(") {
		return nil, false
	}
	start := p.i
	if t, ok := p.typ(); p.taken(ok, start) {
		g.Type = t
	} else if x, ok := p.expr(); p.taken(ok, start) {
		g.X = x
	} else {
		return nil, false
	}
	start = p.i
	var fields []string
	ok := p.lit(",")
	if ok {
		var f string
		f, ok = p.ref(tIdent)
		fields = append(fields, f)
		for n := 0; ok; n++ {
			p.iterate(n)
			at := p.i
			more := p.lit(".")
			if more {
				f, more = p.ref(tIdent)
			}
			if !p.taken(more, at) {
				break
			}
			fields = append(fields, f)
		}
	}
	if p.taken(ok, start) {
		g.Fields = fields
	}
	if !p.lit(")") {
		return nil, false
	}
	g.EndPos = p.peek().Pos
	return g, true
}

// list parses open `@@ ( "," @@ )*` close, the expressions optional
// unless needed: `"[" @@ ( "," @@ )* "]"` for map keys, `( @@ ( "," @@
// )* )? ")"` for arguments (after a "(" the caller matched).
func (p *descent) list(open, close string, needed bool) ([]*gExpr, bool) {
	if open != "" && !p.lit(open) {
		return nil, false
	}
	var out []*gExpr
	start := p.i
	first, ok := p.expr()
	switch {
	case needed && !ok:
		return nil, false
	case !needed && !p.taken(ok, start):
		// ( ... )? around the whole list
	default:
		out = append(out, first)
		for n := 0; ; n++ {
			p.iterate(n)
			start := p.i
			var e *gExpr
			ok := p.lit(",")
			if ok {
				e, ok = p.expr()
			}
			if !p.taken(ok, start) {
				break
			}
			out = append(out, e)
		}
	}
	if !p.lit(close) {
		return nil, false
	}
	return out, true
}
