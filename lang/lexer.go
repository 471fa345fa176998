package lang

import "github.com/alecthomas/participle/v2/lexer"

// The lexer is stateful so that the two block forms and predicates are
// unambiguous without backtracking:
//   - at top level, `{` opens a brace block, `<` an angle block and `/` a predicate;
//   - in an angle block, a `>` outside any (), [] or {} closes the block, so a
//     comparison there is written in parentheses: `< if (len > 9) { ... } >`;
//   - in a predicate, a `/` outside parentheses closes it (divide inside parentheses),
//     as in bpftrace.
const (
	hexGroup = `[0-9a-fA-F]{1,4}`
	ipv4Re   = `[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}`
	ipv6Re   = `(?:(?:` + hexGroup + `:){7}` + hexGroup +
		`|(?:` + hexGroup + `(?::` + hexGroup + `)*)?::(?:(?:` + hexGroup + `:)*(?:` + ipv4Re + `|` + hexGroup + `))?)`
	opRe = `<<=|>>=|\+\+|--|->|&&|\|\||==|!=|<=|>=|<<|>>|\+=|-=|\*=|/=|%=|&=|\|=|\^=|[-+*/%&|^!~<>=?:;,.]`
)

// trivia are the rules every state starts with: whitespace and comments,
// before any rule that could take a comment's "/" for an operator.
func trivia() []lexer.Rule {
	return []lexer.Rule{
		{Name: "whitespace", Pattern: `[ \t\r\n]+`},
		{Name: "comment", Pattern: `//[^\n]*|/\*(?s:.*?)\*/`},
		{Name: "BadComment", Pattern: `/\*`},
	}
}

// exprTokens are the tokens of expressions and statements.
func exprTokens() []lexer.Rule {
	return []lexer.Rule{
		{Name: "String", Pattern: `"(?:\\.|[^"\\\n])*"`},
		{Name: "BadString", Pattern: `"(?:\\.|[^"\\\n])*`},
		{Name: "IPv6", Pattern: ipv6Re + `(?:/[0-9]+)?`},
		{Name: "IPv4", Pattern: ipv4Re + `(?:/[0-9]+)?`},
		{Name: "Int", Pattern: `0[xX][0-9a-fA-F]+|[0-9]+`},
		{Name: "Var", Pattern: `\$(?:[A-Za-z_][A-Za-z_0-9]*|[0-9]+|#)`},
		{Name: "Map", Pattern: `@[A-Za-z_0-9]*`},
		{Name: "Ident", Pattern: `[A-Za-z_][A-Za-z_0-9]*`},
		{Name: "LParen", Pattern: `\(`, Action: lexer.Push("Paren")},
		{Name: "LBrack", Pattern: `\[`, Action: lexer.Push("Brack")},
		{Name: "LBrace", Pattern: `\{`, Action: lexer.Push("Brace")},
		{Name: "Op", Pattern: opRe},
		// A closer of the wrong kind becomes a token so the parser can say what it expected.
		{Name: "Stray", Pattern: `[})\]]`},
	}
}

// exprState is a state of nested expression text: trivia, then the rules
// that end the state (tried before the operators they resemble), then tokens.
func exprState(closers ...lexer.Rule) []lexer.Rule {
	rules := append(trivia(), closers...)
	return append(rules, exprTokens()...)
}

var lexerDef = lexer.MustStateful(lexer.Rules{
	"Root": append(trivia(),
		lexer.Rule{Name: "LBrace", Pattern: `\{`, Action: lexer.Push("Brace")},
		lexer.Rule{Name: "AngleOpen", Pattern: `<`, Action: lexer.Push("Angle")},
		lexer.Rule{Name: "PredOpen", Pattern: `/`, Action: lexer.Push("Pred")},
		lexer.Rule{Name: "Comma", Pattern: `,`},
		lexer.Rule{Name: "Hash", Pattern: `#[^\n]*`},
		lexer.Rule{Name: "TopStray", Pattern: `[})\]>]`},
		lexer.Rule{Name: "ProbeSpec", Pattern: `[^\s,{}</>]+`},
	),
	"Brace": exprState(lexer.Rule{Name: "RBrace", Pattern: `\}`, Action: lexer.Pop()}),
	"Angle": exprState(
		lexer.Rule{Name: "AngleOp", Pattern: `>>=|>>|>=`},
		lexer.Rule{Name: "AngleClose", Pattern: `>`, Action: lexer.Pop()},
	),
	"Pred":  exprState(lexer.Rule{Name: "PredClose", Pattern: `/`, Action: lexer.Pop()}),
	"Paren": exprState(lexer.Rule{Name: "RParen", Pattern: `\)`, Action: lexer.Pop()}),
	"Brack": exprState(lexer.Rule{Name: "RBrack", Pattern: `\]`, Action: lexer.Pop()}),
})
