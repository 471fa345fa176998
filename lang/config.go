package lang

import (
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// bpftrace 0.2x's config block sets its config variables from the script,
// before the first probe:
//
//	config = { missing_probes = "ignore"; max_map_keys = 2 }
//
// A value is a string, an integer or a name (stack_mode = perf). The block
// is parsed here, by hand, and not by the grammar: it is one top-level
// chunk of its own (scan splits the script after its }), so the grammar
// of probes stays as it is. The checker says which keys exist and applies
// them (check/config.go).

// Config is a script's config block.
type Config struct {
	At      Span
	Entries []*ConfigEntry
}

// ConfigEntry is one `key = value` of a config block: Key as written
// (missing_probes, BPFTRACE_MISSING_PROBES); Value the value's text, a
// string's escapes decoded. Int is the value of an integer (IsInt), and
// IsStr says the value was a string literal.
type ConfigEntry struct {
	At        Span
	Key       string
	KeySpan   Span
	Value     string
	ValueSpan Span
	IsStr     bool
	IsInt     bool
	Int       uint64
}

// Span returns the source span of the node.
func (n *Config) Span() Span { return n.At }

// Span returns the source span of the node.
func (n *ConfigEntry) Span() Span { return n.At }

// configParser reads a config block's tokens.
type configParser struct {
	src   *Source
	toks  []lexer.Token
	i     int
	diags *Diagnostics
}

// config parses a chunk that is a config block: it reports false when the
// chunk does not start with `config =`, and otherwise returns the block,
// having reported what is wrong in it.
func (r *rangeParser) config(ch chunk, diags *Diagnostics) (*Config, bool) {
	toks, err := appendTokens(nil, r.lexer(ch))
	if err != nil || len(toks) == 0 || toks[0].Type != tProbeSpec {
		return nil, false
	}
	// At top level `config = {` lexes as probe specs up to the brace:
	// "config", "=" or "config=".
	head, i := "", 0
	for i < len(toks) && toks[i].Type == tProbeSpec && len(head) < len("config=") {
		head += toks[i].Value
		i++
	}
	if head != "config=" || !strings.HasPrefix(toks[0].Value, "config") {
		return nil, false
	}
	p := &configParser{src: r.src, toks: toks, i: i, diags: diags}
	cfg := &Config{At: p.span(toks[0], toks[len(toks)-1])}
	if t := p.peek(); t.Type != tLBrace {
		p.errorf(t, "a config block is written config = { key = value; ... }", "syntax error: expected \"{\" after config =")
		return cfg, true
	}
	p.i++
	for {
		t := p.peek()
		switch {
		case t.Type == tRBrace:
			p.i++
			if t := p.peek(); !t.EOF() {
				p.errorf(t, "", "syntax error: unexpected %q after the config block", t.Value)
			}
			return cfg, true
		case t.Value == ";" && t.Type == tOp:
			p.i++
			continue
		}
		e, ok := p.entry()
		if !ok {
			return cfg, true
		}
		cfg.Entries = append(cfg.Entries, e)
	}
}

// entry parses `key = value`.
func (p *configParser) entry() (*ConfigEntry, bool) {
	key := p.peek()
	if key.Type != tIdent {
		p.errorf(key, "a config block is written config = { key = value; ... }", "syntax error: expected a config variable's name, got %s", describeTok(key))
		return nil, false
	}
	p.i++
	if eq := p.peek(); eq.Type != tOp || eq.Value != "=" {
		p.errorf(eq, "a config variable is set with =: "+key.Value+" = value", "syntax error: expected \"=\" after %s", key.Value)
		return nil, false
	}
	p.i++
	val := p.peek()
	e := &ConfigEntry{Key: key.Value, KeySpan: p.span(key, key), Value: val.Value, ValueSpan: p.span(val, val)}
	switch val.Type {
	case tString:
		v, bad := unquote(val.Value)
		if bad != "" {
			p.errorf(val, "", "%s", bad)
		}
		e.Value, e.IsStr = v, true
	case tInt:
		n, err := parseInt(val.Value)
		if err != nil {
			p.errorf(val, "integers are 64-bit: at most 18446744073709551615", "integer literal %s out of range", val.Value)
		}
		e.Int, e.IsInt = n, true
	case tIdent:
	default:
		p.errorf(val, "a value is a string, an integer or a name: "+key.Value+" = \"...\"", "syntax error: expected the value of %s, got %s", key.Value, describeTok(val))
		return nil, false
	}
	p.i++
	e.At = p.span(key, val)
	if t := p.peek(); t.Type != tRBrace && (t.Type != tOp || t.Value != ";") {
		p.errorf(t, "end each entry with ; or the block with }", "syntax error: unexpected %s after %s = %s", describeTok(t), key.Value, val.Value)
		return e, false
	}
	return e, true
}

func (p *configParser) peek() lexer.Token { return p.toks[min(p.i, len(p.toks)-1)] }

// span covers the tokens from a to b.
func (p *configParser) span(a, b lexer.Token) Span {
	return Span{Start: p.src.PosAt(a.Pos.Offset), End: p.src.PosAt(b.Pos.Offset + len(b.Value))}
}

func (p *configParser) errorf(t lexer.Token, hint, format string, args ...any) {
	p.diags.Add(p.span(t, t), hint, format, args...)
}

// describeTok names a token for a syntax error.
func describeTok(t lexer.Token) string {
	if t.EOF() {
		return "end of script"
	}
	return "\"" + t.Value + "\""
}
