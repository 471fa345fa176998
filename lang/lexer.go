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

func exprRules() []lexer.Rule {
	return []lexer.Rule{
		{Name: "whitespace", Pattern: `[ \t\r\n]+`},
		{Name: "comment", Pattern: `//[^\n]*|/\*(?s:.*?)\*/`},
		{Name: "BadComment", Pattern: `/\*`},
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

func rulesWith(first ...lexer.Rule) []lexer.Rule {
	return append(first, exprRules()...)
}

var lexerDef = lexer.MustStateful(lexer.Rules{
	"Root": {
		{Name: "whitespace", Pattern: `[ \t\r\n]+`},
		{Name: "comment", Pattern: `//[^\n]*|/\*(?s:.*?)\*/`},
		{Name: "BadComment", Pattern: `/\*`},
		{Name: "LBrace", Pattern: `\{`, Action: lexer.Push("Brace")},
		{Name: "AngleOpen", Pattern: `<`, Action: lexer.Push("Angle")},
		{Name: "PredOpen", Pattern: `/`, Action: lexer.Push("Pred")},
		{Name: "Comma", Pattern: `,`},
		{Name: "Hash", Pattern: `#[^\n]*`},
		{Name: "TopStray", Pattern: `[})\]>]`},
		{Name: "ProbeSpec", Pattern: `[^\s,{}</>]+`},
	},
	"Brace": rulesWith(lexer.Rule{Name: "RBrace", Pattern: `\}`, Action: lexer.Pop()}),
	"Angle": append([]lexer.Rule{
		{Name: "whitespace", Pattern: `[ \t\r\n]+`},
		{Name: "comment", Pattern: `//[^\n]*|/\*(?s:.*?)\*/`},
		{Name: "BadComment", Pattern: `/\*`},
		{Name: "AngleOp", Pattern: `>>=|>>|>=`},
		{Name: "AngleClose", Pattern: `>`, Action: lexer.Pop()},
	}, exprRules()...),
	"Pred": append([]lexer.Rule{
		{Name: "whitespace", Pattern: `[ \t\r\n]+`},
		{Name: "comment", Pattern: `//[^\n]*|/\*(?s:.*?)\*/`},
		{Name: "BadComment", Pattern: `/\*`},
		{Name: "PredClose", Pattern: `/`, Action: lexer.Pop()},
	}, exprRules()...),
	"Paren": rulesWith(lexer.Rule{Name: "RParen", Pattern: `\)`, Action: lexer.Pop()}),
	"Brack": rulesWith(lexer.Rule{Name: "RBrack", Pattern: `\]`, Action: lexer.Pop()}),
})
