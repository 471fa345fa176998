package lang

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
)

// refLexerDef is the regular-expression lexer that lexer.go replaced, kept
// as the reference its tokens are compared with.
//   - at top level, `{` opens a brace block, `<` an angle block and `/` a predicate;
//   - in an angle block, a `>` outside any (), [] or {} closes the block, so a
//     comparison there is written in parentheses: `< if (len > 9) { ... } >`;
//   - in a predicate, a `/` outside parentheses closes it (divide inside parentheses),
//     as in bpftrace.
const opRe = `<<=|>>=|\+\+|--|->|&&|\|\||==|!=|<=|>=|<<|>>|\+=|-=|\*=|/=|%=|&=|\|=|\^=|\.\.|[-+*/%&|^!~<>=?:;,.]`

// trivia are the rules every state starts with: whitespace and comments,
// before any rule that could take a comment's "/" for an operator.
func trivia() []lexer.Rule {
	return []lexer.Rule{
		{Name: "whitespace", Pattern: `[ \t\r\n]+`},
		{Name: "comment", Pattern: `//[^\n]*|/\*(?s:.*?)\*/`},
		{Name: "BadComment", Pattern: `/\*`},
	}
}

// intSuffixRe is intSuffixes as the reference's alternation.
var intSuffixRe = strings.Join(intSuffixes, "|")

// exprTokens are the tokens of expressions and statements.
func exprTokens() []lexer.Rule {
	return []lexer.Rule{
		{Name: "String", Pattern: `"(?:\\.|[^"\\\n])*"`},
		{Name: "BadString", Pattern: `"(?:\\.|[^"\\\n])*`},
		{Name: "IPv6", Pattern: ipv6Re + `(?:/[0-9]+)?`},
		{Name: "IPv4", Pattern: ipv4Re + `(?:/[0-9]+)?`},
		{Name: "Int", Pattern: `(?:0[xX][0-9a-fA-F](?:_?[0-9a-fA-F])*|[0-9](?:_?[0-9])*(?:e[0-9](?:_?[0-9])*)?)(?:` + intSuffixRe + `)?`},
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

var refLexerDef = lexer.MustStateful(lexer.Rules{
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

// lexAll lexes text to its end or first error: each token as its type's
// name, position and text, then the error's position, if any.
func lexAll(t *testing.T, def lexer.StringDefinition, text string) []string {
	t.Helper()
	names := lexer.SymbolsByRune(def.(lexer.Definition))
	l, err := def.LexString("x.st", text)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		tok, err := l.Next()
		if err != nil {
			var perr interface{ Position() lexer.Position }
			if !errors.As(err, &perr) {
				t.Fatalf("lexer error without a position: %v", err)
			}
			return append(out, fmt.Sprintf("error at %v", perr.Position()))
		}
		out = append(out, fmt.Sprintf("%s %v %q", names[tok.Type], tok.Pos, tok.Value))
		if tok.EOF() {
			return out
		}
	}
}

// TestLexerMatchesReference lexes the parser's golden inputs, the bundled
// tools, and thousands of mutations of them with both lexers: the tokens,
// their positions and the errors are the same.
func TestLexerMatchesReference(t *testing.T) {
	var corpus []string
	files, _ := filepath.Glob("testdata/parse/*.st")
	tools, _ := filepath.Glob("../scripts/*.st")
	for _, f := range append(files, tools...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		corpus = append(corpus, string(b))
	}
	if len(corpus) < 10 {
		t.Fatalf("corpus of %d scripts", len(corpus))
	}
	pieces := []string{"/", "*/", "/*", "//", "\"", "\\", "\n", "<", ">", ">>=", "{", "}", "(", ")", "[", "]",
		"::1", "fe80::1/64", "10.0.0.1", "1.2.3.4/24", "0x", "0x1f", "$", "$#", "$1", "@", "#", ":", "é", "\f", "a::b", "1:2:3:4:5:6:7:8"}
	r := rand.New(rand.NewPCG(1, 2))
	inputs := slices.Clone(corpus)
	for range 3000 {
		s := []byte(corpus[r.IntN(len(corpus))])
		for range 1 + r.IntN(3) {
			at := r.IntN(len(s) + 1)
			switch r.IntN(3) {
			case 0:
				s = slices.Insert(s, at, []byte(pieces[r.IntN(len(pieces))])...)
			case 1:
				if at < len(s) {
					s = slices.Delete(s, at, min(len(s), at+1+r.IntN(4)))
				}
			default:
				s = slices.Insert(s, at, byte(r.IntN(128)))
			}
		}
		inputs = append(inputs, string(s))
	}
	for _, in := range inputs {
		want := lexAll(t, refLexerDef, in)
		got := lexAll(t, lexerDef, in)
		if !slices.Equal(got, want) {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Fatalf("lexing %q: token %d is %s, want %s", in, i, got[i], want[i])
				}
			}
			t.Fatalf("lexing %q: %d tokens, want %d", in, len(got), len(want))
		}
	}
}
