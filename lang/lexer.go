package lang

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// The lexer is stateful so that the two block forms and predicates are
// unambiguous without backtracking:
//   - at top level, `{` opens a brace block, `<` an angle block and `/` a predicate;
//   - in an angle block, a `>` outside any (), [] or {} closes the block, so a
//     comparison there is written in parentheses: `< if (len > 9) { ... } >`;
//   - in a predicate, a `/` outside parentheses closes it (divide inside parentheses),
//     as in bpftrace.
//
// It is written by hand: participle's regular-expression lexer took most
// of a compile's time. In each state the first rule that matches wins, as
// in the rule lists of lexer_ref_test.go, which the tests compare it with.
const (
	hexGroup = `[0-9a-fA-F]{1,4}`
	ipv4Re   = `[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}`
	ipv6Re   = `(?:(?:` + hexGroup + `:){7}` + hexGroup +
		`|(?:` + hexGroup + `(?::` + hexGroup + `)*)?::(?:(?:` + hexGroup + `:)*(?:` + ipv4Re + `|` + hexGroup + `))?)`
)

// Address literals are matched with their expressions, on a bounded window
// of text, and only where the first characters allow one.
var (
	ipv6Lit = regexp.MustCompile(`^(?:` + ipv6Re + `)(?:/[0-9]+)?`)
	ipv4Lit = regexp.MustCompile(`^` + ipv4Re + `(?:/[0-9]+)?`)
)

// addrWindow bounds the text an address literal is looked for in.
const addrWindow = 256

// tokenNames are the lexer's symbols; a token's type is its index here,
// negated and less one (EOF is -1).
var tokenNames = []string{"EOF",
	"whitespace", "comment", "BadComment",
	"LBrace", "AngleOpen", "PredOpen", "Comma", "Hash", "TopStray", "ProbeSpec",
	"String", "BadString", "IPv6", "IPv4", "Int", "Var", "Map", "Ident",
	"LParen", "LBrack", "Op", "Stray",
	"RBrace", "AngleOp", "AngleClose", "PredClose", "RParen", "RBrack",
}

var symbols = func() map[string]lexer.TokenType {
	m := map[string]lexer.TokenType{}
	for i, n := range tokenNames {
		m[n] = lexer.TokenType(-1 - i)
	}
	return m
}()

func tok(name string) lexer.TokenType { return symbols[name] }

var (
	tWhitespace, tComment, tBadComment = tok("whitespace"), tok("comment"), tok("BadComment")
	tLBrace, tAngleOpen, tPredOpen     = tok("LBrace"), tok("AngleOpen"), tok("PredOpen")
	tComma, tHash, tTopStray           = tok("Comma"), tok("Hash"), tok("TopStray")
	tProbeSpec, tString, tBadString    = tok("ProbeSpec"), tok("String"), tok("BadString")
	tIPv6, tIPv4, tInt, tVar, tMap     = tok("IPv6"), tok("IPv4"), tok("Int"), tok("Var"), tok("Map")
	tIdent, tLParen, tLBrack, tOp      = tok("Ident"), tok("LParen"), tok("LBrack"), tok("Op")
	tStray, tRBrace, tAngleOp          = tok("Stray"), tok("RBrace"), tok("AngleOp")
	tAngleClose, tPredClose            = tok("AngleClose"), tok("PredClose")
	tRParen, tRBrack                   = tok("RParen"), tok("RBrack")
)

// lexState is where the lexer is: top level, or inside a kind of bracket.
type lexState uint8

const (
	stRoot lexState = iota
	stBrace
	stAngle
	stPred
	stParen
	stBrack
)

// scriptLexer is the lexer.Definition of the language.
type scriptLexer struct{}

var lexerDef = scriptLexer{}

func (scriptLexer) Symbols() map[string]lexer.TokenType { return symbols }

func (d scriptLexer) Lex(filename string, r io.Reader) (lexer.Lexer, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return d.LexString(filename, string(b))
}

func (scriptLexer) LexString(filename, s string) (lexer.Lexer, error) {
	return &textLexer{text: s, pos: lexer.Position{Filename: filename, Line: 1, Column: 1}, states: []lexState{stRoot}}, nil
}

// textLexer lexes one text.
type textLexer struct {
	text   string
	pos    lexer.Position
	states []lexState
	// macros are the script's #defines, substituted for their names;
	// pending holds the rest of a substituted value.
	macros  *macros
	pending []lexer.Token
}

func (l *textLexer) Next() (lexer.Token, error) {
	if len(l.pending) > 0 {
		t := l.pending[0]
		l.pending = l.pending[1:]
		return t, nil
	}
	for {
		if l.pos.Offset >= len(l.text) {
			return lexer.Token{Type: lexer.EOF, Pos: l.pos}, nil
		}
		rest := l.text[l.pos.Offset:]
		typ, n := l.match(rest)
		if n == 0 {
			sample := rest[:min(len(rest), 16)]
			return lexer.Token{}, &lexer.Error{Msg: fmt.Sprintf("invalid input text %q", sample), Pos: l.pos}
		}
		if typ == tWhitespace || typ == tComment {
			// Lower-case rules are not emitted, as participle's lexer does.
			l.advance(rest[:n])
			continue
		}
		t := l.emit(typ, rest[:n])
		if typ == tIdent && l.macros != nil {
			if toks := l.macros.expand(t.Value, t.Pos); toks != nil {
				l.pending = toks[1:]
				return toks[0], nil
			}
		}
		return t, nil
	}
}

// emit makes the token, moves past it and enters or leaves a state.
func (l *textLexer) emit(typ lexer.TokenType, value string) lexer.Token {
	t := lexer.Token{Type: typ, Value: value, Pos: l.pos}
	l.advance(value)
	switch typ {
	case tLBrace:
		l.states = append(l.states, stBrace)
	case tLParen:
		l.states = append(l.states, stParen)
	case tLBrack:
		l.states = append(l.states, stBrack)
	case tAngleOpen:
		l.states = append(l.states, stAngle)
	case tPredOpen:
		l.states = append(l.states, stPred)
	case tRBrace, tAngleClose, tPredClose, tRParen, tRBrack:
		l.states = l.states[:len(l.states)-1]
	}
	return t
}

// advance moves the position over s, counting lines and columns (in
// runes, as participle does).
func (l *textLexer) advance(s string) {
	l.pos.Offset += len(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		l.pos.Line += strings.Count(s, "\n")
		s = s[i+1:]
		l.pos.Column = 1
	}
	for range s {
		l.pos.Column++
	}
}

// match returns the first rule of the current state that matches at the
// start of s, and its length; 0 if none does.
func (l *textLexer) match(s string) (lexer.TokenType, int) {
	if t, n := matchTrivia(s); n > 0 {
		return t, n
	}
	st := l.states[len(l.states)-1]
	c := s[0]
	switch st {
	case stRoot:
		switch c {
		case '{':
			return tLBrace, 1
		case '<':
			return tAngleOpen, 1
		case '/':
			return tPredOpen, 1
		case ',':
			return tComma, 1
		case '#':
			return tHash, lineEnd(s)
		case '}', ')', ']', '>':
			return tTopStray, 1
		}
		stop := "\t\n\f\r ,{}</>"
		if userProbe(s) {
			// A user-space probe names a binary by its path, slashes
			// included, so that its error says it is out of scope.
			stop = "\t\n\f\r ,{}"
		}
		n := 0
		for n < len(s) && !strings.ContainsRune(stop, rune(s[n])) {
			n++
		}
		return tProbeSpec, n
	case stBrace:
		if c == '}' {
			return tRBrace, 1
		}
	case stAngle:
		for _, op := range []string{">>=", ">>", ">="} {
			if strings.HasPrefix(s, op) {
				return tAngleOp, len(op)
			}
		}
		if c == '>' {
			return tAngleClose, 1
		}
	case stPred:
		if c == '/' {
			return tPredClose, 1
		}
	case stParen:
		if c == ')' {
			return tRParen, 1
		}
	case stBrack:
		if c == ']' {
			return tRBrack, 1
		}
	}
	return matchExpr(s)
}

// matchTrivia matches whitespace, comments and an unterminated comment.
func matchTrivia(s string) (lexer.TokenType, int) {
	n := 0
	for n < len(s) && (s[n] == ' ' || s[n] == '\t' || s[n] == '\r' || s[n] == '\n') {
		n++
	}
	if n > 0 {
		return tWhitespace, n
	}
	switch {
	case strings.HasPrefix(s, "//"):
		return tComment, lineEnd(s)
	case strings.HasPrefix(s, "/*"):
		if i := strings.Index(s[2:], "*/"); i >= 0 {
			return tComment, i + 4
		}
		return tBadComment, 2
	}
	return 0, 0
}

// lineEnd is the length of s up to its first newline.
func lineEnd(s string) int {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return i
	}
	return len(s)
}

// ops are the operators of more than one character, in the order the
// reference's alternation tries them.
var ops = []string{"<<=", ">>=", "++", "--", "->", "&&", "||", "==", "!=", "<=", ">=", "<<", ">>",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ".."}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }

// identLen is the length of the identifier characters at the start of s.
func identLen(s string) int {
	n := 0
	for n < len(s) && isIdentChar(s[n]) {
		n++
	}
	return n
}

// matchExpr matches the tokens of expressions, in the reference's order:
// strings, addresses, numbers, variables, maps, names, brackets, operators.
func matchExpr(s string) (lexer.TokenType, int) {
	c := s[0]
	switch {
	case c == '"':
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '"':
				return tString, i + 1
			case '\\':
				if i+1 < len(s) && s[i+1] != '\n' {
					i++
					continue
				}
				return tBadString, i
			case '\n':
				return tBadString, i
			}
		}
		return tBadString, len(s)
	case isHex(c) || c == ':':
		if n := matchAddr(s); n > 0 {
			return tIPv6, n
		}
	}
	if isDigit(c) {
		if n := matchIPv4(s); n > 0 {
			return tIPv4, n
		}
		if c == '0' && len(s) > 2 && (s[1] == 'x' || s[1] == 'X') && isHex(s[2]) {
			n := 2
			for n < len(s) && (isHex(s[n]) || s[n] == '_' && n+1 < len(s) && isHex(s[n+1])) {
				n++
			}
			return tInt, n + intSuffixLen(s[n:])
		}
		n := digitsLen(s)
		// bpftrace's integer exponent: 1e6 is 1000000.
		if n+1 < len(s) && s[n] == 'e' && isDigit(s[n+1]) {
			n++
			n += digitsLen(s[n:])
		}
		return tInt, n + intSuffixLen(s[n:])
	}
	switch {
	case c == '$':
		switch {
		case len(s) > 1 && isIdentStart(s[1]):
			return tVar, 1 + identLen(s[1:])
		case len(s) > 1 && isDigit(s[1]):
			n := 1
			for n < len(s) && isDigit(s[n]) {
				n++
			}
			return tVar, n
		case len(s) > 1 && s[1] == '#':
			return tVar, 2
		}
	case c == '@':
		return tMap, 1 + identLen(s[1:])
	case isIdentStart(c):
		return tIdent, identLen(s)
	case c == '(':
		return tLParen, 1
	case c == '[':
		return tLBrack, 1
	case c == '{':
		return tLBrace, 1
	}
	for _, op := range ops {
		if strings.HasPrefix(s, op) {
			return tOp, len(op)
		}
	}
	if strings.IndexByte("-+*/%&|^!~<>=?:;,.", c) >= 0 {
		return tOp, 1
	}
	if c == '}' || c == ')' || c == ']' {
		return tStray, 1
	}
	return 0, 0
}

// matchAddr is the length of an IPv6 literal at the start of s, or 0.
// Every one starts with up to four hex digits and a colon.
func matchAddr(s string) int { return matchLiteral(s, isHex, 4, ':', ipv6Lit) }

// matchIPv4 is the length of an IPv4 literal at the start of s, or 0.
// Every one starts with up to three digits and a dot.
func matchIPv4(s string) int { return matchLiteral(s, isDigit, 3, '.', ipv4Lit) }

// matchLiteral runs re on a bounded window of s where s starts as every
// match of re does: up to lead characters of a class, then sep.
func matchLiteral(s string, class func(byte) bool, lead int, sep byte, re *regexp.Regexp) int {
	n := 0
	for n < lead && n < len(s) && class(s[n]) {
		n++
	}
	if n >= len(s) || s[n] != sep {
		return 0
	}
	return len(re.FindString(s[:min(len(s), addrWindow)]))
}

// userProbe reports whether s starts with a user-space probe kind.
func userProbe(s string) bool {
	for _, k := range []string{"uprobe:", "uretprobe:", "usdt:", "ur:", "u:", "U:"} {
		if strings.HasPrefix(s, k) {
			return true
		}
	}
	return false
}
