package pcapfilter

import (
	"strings"
)

// tokKind is what a token is.
type tokKind uint8

const (
	tokEOF  tokKind = iota
	tokWord         // a keyword, a name, a number or an address
	tokOp           // punctuation: ( ) [ ] : ! && || and the arithmetic operators
)

// token is one lexeme of a filter, with its byte range in the filter.
type token struct {
	kind     tokKind
	text     string
	off, end int
}

// opTokens are the operators, longest first.
var opTokens = []string{"&&", "||", "<<", ">>", "<=", ">=", "==", "!=", "(", ")", "[", "]", ":", "!", "&", "|", "^", "+", "-", "*", "/", "%", "<", ">", "="}

// lex splits a filter into tokens. Words run as libpcap's do: a letter,
// digit, underscore or backslash, then letters, digits and . _ - (so
// `tcp-syn` and `10-20` are one word, and `len-14` is not `len - 14`),
// and outside brackets colons too, for IPv6 and MAC addresses.
func lex(s string) ([]token, *Error) {
	var toks []token
	depth := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case isWordStart(c) || (c == ':' && depth == 0 && i+1 < len(s) && s[i+1] == ':'):
			j := i + 1
			for j < len(s) && (isWordChar(s[j]) || (s[j] == ':' && depth == 0)) {
				j++
			}
			// A word does not end in '-': `10-` then `-` is an operator.
			for j > i+1 && s[j-1] == '-' {
				j--
			}
			toks = append(toks, token{kind: tokWord, text: s[i:j], off: i, end: j})
			i = j
			continue
		}
		op := ""
		for _, o := range opTokens {
			if strings.HasPrefix(s[i:], o) {
				op = o
				break
			}
		}
		if op == "" {
			return nil, &Error{Off: i, End: i + 1, Msg: "unexpected character " + quoteChar(c)}
		}
		switch op {
		case "[":
			depth++
		case "]":
			depth--
		}
		toks = append(toks, token{kind: tokOp, text: op, off: i, end: i + len(op)})
		i += len(op)
	}
	return append(toks, token{kind: tokEOF, off: len(s), end: len(s)}), nil
}

func isWordStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '\\'
}

func isWordChar(c byte) bool { return isWordStart(c) || c == '.' || c == '-' }

func quoteChar(c byte) string {
	if c < ' ' || c > '~' {
		return "(a control character)"
	}
	return "'" + string(c) + "'"
}
