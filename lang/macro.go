package lang

import (
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// A macro is a #define's name and value. The lexer substitutes the value's
// tokens for the name (lexer.go, textLexer.Next), each token placed at the
// name: a node made of a macro spans the name in the script, so errors
// point there and print() names it as written.
type macro struct {
	name     string
	from, to int           // the offsets of the text it is defined in
	toks     []lexer.Token // the value; none for a name defined without one
}

// macros are a script's #defines, by name; a name may be defined again
// further on, or undefined.
type macros struct {
	byName map[string][]*macro
}

// haveBTF is the macro bpftrace defines where the kernel has BTF.
const haveBTF = "BPFTRACE_HAVE_BTF"

func newMacros() *macros {
	m := &macros{byName: map[string][]*macro{}}
	m.add(&macro{name: haveBTF, from: 0, toks: []lexer.Token{{Type: tInt, Value: "1"}}})
	return m
}

// add defines a macro from its offset on, ending the one before.
func (m *macros) add(mac *macro) {
	m.undefine(mac.name, mac.from)
	mac.to = int(^uint(0) >> 1)
	m.byName[mac.name] = append(m.byName[mac.name], mac)
}

// undefine ends the definition of name in effect at offset off.
func (m *macros) undefine(name string, off int) {
	if mac := m.lookup(name, off); mac != nil {
		mac.to = off
	}
}

// lookup returns the definition of name in effect at offset off, or nil.
func (m *macros) lookup(name string, off int) *macro {
	if m == nil {
		return nil
	}
	for _, mac := range m.byName[name] {
		if mac.from <= off && off < mac.to {
			return mac
		}
	}
	return nil
}

// expand returns the tokens that replace the name at pos, nil where no
// macro with a value is in effect. A macro's value expands the macros in
// it, not itself, as in C.
func (m *macros) expand(name string, pos lexer.Position) []lexer.Token {
	if m == nil {
		return nil
	}
	return m.expandSeen(name, pos, nil)
}

func (m *macros) expandSeen(name string, pos lexer.Position, seen []string) []lexer.Token {
	mac := m.lookup(name, pos.Offset)
	if mac == nil || len(mac.toks) == 0 {
		return nil
	}
	for _, s := range seen {
		if s == name {
			return nil
		}
	}
	seen = append(seen, name)
	var out []lexer.Token
	for _, t := range mac.toks {
		if t.Type == tIdent {
			if sub := m.expandSeen(t.Value, pos, seen); sub != nil {
				out = append(out, sub...)
				continue
			}
		}
		t.Pos = pos
		out = append(out, t)
	}
	return out
}

// define handles `#define NAME value`; arg is what follows #define.
func (p *preprocessor) define(arg string, argAt int, whole Span) {
	n := identLen(arg)
	if n == 0 || !isIdentStart(arg[0]) {
		p.d.Add(whole, "write #define NAME value, e.g. #define AF_INET 2", "#define needs a name")
		return
	}
	name, value := arg[:n], arg[n:]
	if strings.HasPrefix(value, "(") {
		p.d.Add(whole, "define a constant, #define NAME value, or write the expression where it is used",
			"function-like macros are not supported: %s(...)", name)
		return
	}
	toks, ok := lexMacroValue(strings.TrimSpace(value))
	if !ok {
		p.d.Add(whole, "a #define's value is a constant or an expression with its brackets closed, e.g. #define PORT 80",
			"the value of #define %s is not an expression", name)
		return
	}
	p.macros.add(&macro{name: name, from: whole.End.Offset, toks: toks})
}

// lexMacroValue lexes a #define's value as expression tokens; false when
// it is not one: an unclosed or stray bracket, a brace, a ; or what does
// not lex.
func lexMacroValue(value string) ([]lexer.Token, bool) {
	l := &textLexer{text: value, states: []lexState{stRoot, stParen}, pos: lexer.Position{Line: 1, Column: 1}}
	var toks []lexer.Token
	depth := 0
	for {
		t, err := l.Next()
		if err != nil {
			return nil, false
		}
		if t.EOF() {
			return toks, depth == 0
		}
		switch t.Type {
		case tLParen, tLBrack:
			depth++
		case tRParen, tRBrack:
			if depth--; depth < 0 {
				return nil, false
			}
		case tString, tIPv6, tIPv4, tInt, tVar, tMap, tIdent:
		case tOp:
			if t.Value == ";" {
				return nil, false
			}
		default:
			return nil, false
		}
		toks = append(toks, t)
	}
}
