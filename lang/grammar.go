package lang

import "github.com/alecthomas/participle/v2/lexer"

// The participle grammar. These g* types are the concrete syntax; lower.go turns
// them into the AST in ast.go. Binary operators are parsed as a flat list and
// folded by C's precedence in lowering, which keeps the grammar small.

type gScript struct {
	Probes []*gProbe `parser:"@@*"`
}

type gProbe struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Specs  []*gSpec `parser:"@@ ( \",\" @@ )*"`
	Pred   *gExpr   `parser:"( PredOpen @@ PredClose )?"`
	Body   *gBlock  `parser:"@@"`
}

type gSpec struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Text   string `parser:"@ProbeSpec"`
}

type gBlock struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Open   string   `parser:"( @LBrace | @AngleOpen )"`
	Stmts  []*gStmt `parser:"@@*"`
	Close  string   `parser:"( @RBrace | @AngleClose )"`
}

type gStmt struct {
	Pos    lexer.Position
	EndPos lexer.Position
	If     *gIf     `parser:"(   @@"`
	For    *gFor    `parser:"  | @@"`
	While  *gWhile  `parser:"  | @@"`
	Unroll *gUnroll `parser:"  | @@"`
	Let    *gLet    `parser:"  | @@"`
	Jump   string   `parser:"  | @( \"break\" | \"continue\" | \"return\" )"`
	Target *gExpr   `parser:"  | @@"`
	Op     string   `parser:"    ( @( \"=\" | \"+=\" | \"-=\" | \"*=\" | \"/=\" | \"%=\" | \"&=\" | \"|=\" | \"^=\" | \"<<=\" | \">>=\" )"`
	Value  *gExpr   `parser:"      @@"`
	Incr   string   `parser:"    | @( \"++\" | \"--\" ) )? )"`
	Semis  []string `parser:"@\";\"*"`
}

// gLet is bpftrace's declaration of a scratch variable: `let $x;`,
// `let $x = expr;`, `let $x: uint32 = expr;`, `let $sk: struct sock *;`.
type gLet struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Var    string `parser:"\"let\" @Var"`
	Type   *gType `parser:"( \":\" @@ )?"`
	Value  *gExpr `parser:"( \"=\" @@ )?"`
}

// gType is a type as a declaration names it: an integer type, or a
// pointer to a struct or union.
type gType struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Tag    string   `parser:"(   @( \"struct\" | \"union\" )"`
	Name   string   `parser:"    @Ident"`
	IntTy  string   `parser:"  | @( \"uint8\" | \"uint16\" | \"uint32\" | \"uint64\" | \"int8\" | \"int16\" | \"int32\" | \"int64\" ) )"`
	Stars  []string `parser:"@\"*\"*"`
}

// gFor is bpftrace's for loop, its head in parentheses or not: over a map,
// `for ($kv : @map) { ... }`, or over a range, `for ($i : 0..N) { ... }`.
// Iter is the map or the range's start; lowering checks which.
type gFor struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Open   string  `parser:"\"for\" @\"(\"?"`
	Var    string  `parser:"@Var \":\""`
	Iter   *gUnary `parser:"@@"`
	End    *gUnary `parser:"( \"..\" @@ )?"`
	Close  string  `parser:"@\")\"?"`
	Body   *gBlock `parser:"@@"`
}

// gWhile is bpftrace's while loop: `while (cond) { ... }`.
type gWhile struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Cond   *gExpr  `parser:"\"while\" \"(\" @@ \")\""`
	Body   *gBlock `parser:"@@"`
}

// gUnroll is bpftrace's unroll: `unroll(n) { ... }`, the block n times.
type gUnroll struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Count  *gExpr  `parser:"\"unroll\" \"(\" @@ \")\""`
	Body   *gBlock `parser:"@@"`
}

type gIf struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Cond   *gExpr  `parser:"\"if\" ( \"(\" @@ \")\""`
	Bare   *gUnary `parser:"         | @@ )"`
	Then   *gBlock `parser:"@@"`
	ElseIf *gIf    `parser:"( \"else\" ( @@"`
	Else   *gBlock `parser:"         | @@ ) )?"`
}

// gExpr is a block expression `{ stmts; value }`, an if expression
// `if (c) { a } else { b }` (bpftrace 0.26's), or a conditional
// expression `cond ? then : else` (or `cond ?: else`, cond its own
// then), right-associative. A block is not an
// operand of a binary operator (write it in parentheses), so that the /
// closing a predicate is not read as a division of the block after it.
type gExpr struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Block  *gBlock  `parser:"(   @@"`
	IfX    *gIf     `parser:"  | @@"`
	Cond   *gBinary `parser:"  | @@"`
	Then   *gExpr   `parser:"    ( \"?\" @@?"`
	Else   *gExpr   `parser:"      \":\" @@ )? )"`
}

type gBinary struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Head   *gUnary   `parser:"@@"`
	Tail   []*gOpArg `parser:"@@*"`
}

type gOpArg struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Op     string  `parser:"@( \"||\" | \"&&\" | \"|\" | \"^\" | \"&\" | \"==\" | \"!=\" | \"<=\" | \">=\" | \"<\" | \">\" | \"in\" | \"<<\" | \">>\" | \"+\" | \"-\" | \"*\" | \"/\" | \"%\" )"`
	X      *gUnary `parser:"@@"`
}

type gUnary struct {
	Pos     lexer.Position
	EndPos  lexer.Position
	Op      string    `parser:"(   @( \"!\" | \"~\" | \"-\" | \"+\" | \"*\" | \"++\" | \"--\" )"`
	X       *gUnary   `parser:"    @@"`
	Cast    *gCast    `parser:"  | @@"`
	Postfix *gPostfix `parser:"  | @@ )"`
}

// gCast is bpftrace's cast to a BTF type, `(struct sock *)arg0`, or to an
// integer type, `(uint32)x`. A parenthesised name alone is not a cast, so
// `(len) - 1` stays a subtraction: only struct/union tags and bpftrace's
// integer type names start one.
type gCast struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Tag    string   `parser:"\"(\" ( @( \"struct\" | \"union\" )"`
	Name   string   `parser:"        @Ident"`
	IntTy  string   `parser:"      | @( \"uint8\" | \"uint16\" | \"uint32\" | \"uint64\" | \"int8\" | \"int16\" | \"int32\" | \"int64\" | \"bool\" | \"uint8_t\" | \"uint16_t\" | \"uint32_t\" | \"uint64_t\" | \"int8_t\" | \"int16_t\" | \"int32_t\" | \"int64_t\" ) )"`
	Stars  []string `parser:"@\"*\"*"`
	Open   string   `parser:"( @\"[\""`
	Len    string   `parser:"  @Int? \"]\" )? \")\""`
	X      *gUnary  `parser:"@@"`
}

type gPostfix struct {
	Pos    lexer.Position
	EndPos lexer.Position
	X      *gPrimary    `parser:"@@"`
	Sels   []*gSelector `parser:"@@*"`
	Incr   string       `parser:"@( \"++\" | \"--\" )?"`
}

type gSelector struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Arrow  string `parser:"(   \"->\" @Ident"`
	Dot    string `parser:"  | \".\" @Ident"`
	Elem   string `parser:"  | \".\" @Int"`
	Index  *gExpr `parser:"  | \"[\" @@ \"]\" )"`
}

type gPrimary struct {
	Pos     lexer.Position
	EndPos  lexer.Position
	Str     *string  `parser:"(   @String"`
	BadStr  *string  `parser:"  | @BadString"`
	IP      *string  `parser:"  | @( IPv6 | IPv4 )"`
	Int     *string  `parser:"  | @Int"`
	Var     *string  `parser:"  | @Var"`
	Map     *string  `parser:"  | @Map"`
	MapKeys []*gExpr `parser:"    ( \"[\" @@ ( \",\" @@ )* \"]\" )?"`
	TypeOf  *gTypeOf `parser:"  | @@"`
	Ident   *string  `parser:"  | @Ident"`
	Call    *string  `parser:"    ( @\"(\""`
	Args    []*gExpr `parser:"      ( @@ ( \",\" @@ )* )? \")\" )?"`
	Paren   *gParen  `parser:"  | @@ )"`
}

// gParen is a parenthesised expression, a tuple or a record: `(x)`,
// `(a, b)`, `(a,)`, `()`, `(name=a, other=b)`.
type gParen struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Elems  []*gElem `parser:"\"(\" ( @@ ( \",\" @@ )*"`
	Comma  string   `parser:"@\",\"? )? \")\""`
}

// gElem is an element of a parenthesis: a record's is named.
type gElem struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string `parser:"( @Ident \"=\" )?"`
	X      *gExpr `parser:"@@"`
}

// gTypeOf is bpftrace's sizeof(TYPE), sizeof(expr), offsetof(struct X, a.b)
// and offsetof(expr, a.b): constants from BTF.
type gTypeOf struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Kw     string   `parser:"@( \"sizeof\" | \"offsetof\" ) \"(\""`
	Type   *gType   `parser:"(   @@"`
	X      *gExpr   `parser:"  | @@ )"`
	Fields []string `parser:"( \",\" @Ident ( \".\" @Ident )* )? \")\""`
}
