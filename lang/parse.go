package lang

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// parser is built on first use, not as the program starts: building it
// takes a millisecond that what parses no script (-l, --version, -h) need
// not spend.
var parser = sync.OnceValue(func() *participle.Parser[gScript] {
	return participle.MustBuild[gScript](
		participle.Lexer(lexerDef),
		participle.Elide("whitespace", "comment"),
		participle.UseLookahead(lookahead),
	)
})

// Parse parses a script into an AST. All syntax errors are reported: the script
// is split into probes at top-level block ends, and each probe is parsed on its
// own, so that one bad probe does not hide the errors of the next.
func Parse(src *Source) (*Script, error) {
	diags := &Diagnostics{Src: src}
	imported := resolveImports(src, diags)
	text, macros := preprocess(src, blankImports(stripShebang(src.Text), imported), diags)
	script := &Script{Src: src, At: Span{Start: src.PosAt(0), End: src.PosAt(len(src.Text))}}
	ranges := &rangeParser{src: src, text: text, macros: macros}
	for _, ch := range scan(src, text, diags) {
		if ch = ranges.preamble(ch, script, diags); ch.start >= ch.end {
			continue
		}
		if cfg, ok := ranges.config(ch, diags); ok {
			if script.Config != nil || len(script.Probes) > 0 {
				diags.Add(Span{Start: cfg.At.Start, End: src.PosAt(cfg.At.Start.Offset + len("config"))},
					"bpftrace reads one config block, before the first probe: move it to the top", "a config block after the first probe or block")
				continue
			}
			script.Config = cfg
			continue
		}
		g, err := ranges.parse(ch)
		if err != nil {
			// An unclosed ( or [ can swallow the probes after it. Parse the
			// pieces that start at a probe-looking line on their own, so their
			// errors are reported too.
			pieces := splitAtProbeLines(text, ch)
			addParseError(diags, src, text, err)
			for _, pc := range pieces[1:] {
				if g, err := ranges.parse(pc); err != nil {
					addParseError(diags, src, text, err)
				} else {
					script.Probes = append(script.Probes, lowerProbes(src, diags, g)...)
				}
			}
			continue
		}
		script.Probes = append(script.Probes, lowerProbes(src, diags, g)...)
	}
	expandMacros(script, ranges.bpfMacros, diags)
	orderImported(script)
	callBuiltins(script, diags)
	desugar(script, diags)
	if len(script.Probes) == 0 && diags.Len() == 0 {
		diags.Add(Span{Start: src.PosAt(0), End: src.PosAt(0)}, "a script is one or more probes, e.g. `skb:* { print(len) }`", "empty script: no probes")
	}
	return script, diags.Err()
}

func lowerProbes(src *Source, diags *Diagnostics, g *gScript) []*Probe {
	l := lowerer{src: src, diags: diags}
	var out []*Probe
	for _, gp := range g.Probes {
		out = append(out, l.probe(gp))
	}
	return out
}

// probeLine matches a line that starts a probe at its first column.
var probeLine = regexp.MustCompile(`(?m)^(?:(?:skb|kprobe|kretprobe|fentry|fexit|tracepoint|interval|k|kr|f|fr|t|i):\S|BEGIN\b|END\b|begin\b|end\b)`)

// splitAtProbeLines splits a chunk before each line that starts a probe.
func splitAtProbeLines(text string, ch chunk) []chunk {
	out := []chunk{}
	start := ch.start
	for _, m := range probeLine.FindAllStringIndex(text[ch.start:ch.end], -1) {
		at := ch.start + m[0]
		// What precedes the first probe line may be only comments and
		// blanked preprocessor lines: no piece of its own, or the probe's
		// error would be reported twice.
		if at > start && strings.TrimSpace(stripComments(text[start:at])) != "" {
			out = append(out, chunk{start, at})
			start = at
		}
	}
	return append(out, chunk{start, ch.end})
}

// stripShebang blanks a first line starting with #! so positions stay put.
func stripShebang(s string) string {
	if !strings.HasPrefix(s, "#!") {
		return s
	}
	end := strings.IndexByte(s, '\n')
	if end < 0 {
		end = len(s)
	}
	return strings.Repeat(" ", end) + s[end:]
}

// rangeParser parses ranges of one text, text[ch.start:ch.end], with the
// positions of the file: the lexer starts there, at top level. (Parsing a
// copy of the text with what precedes the chunk blanked out, as this once
// did, made a script's parse time grow with the square of its probes.)
type rangeParser struct {
	src    *Source
	text   string
	macros *macros
	// bpfMacros are bpftrace's macros the script defines (macrodef.go).
	bpfMacros map[string]*macroDef
	// The tokens and descent's nodes are reused from range to range.
	toks  []lexer.Token
	nodes descentNodes
}

// parse parses a range by descent, or, when descent does not accept it, by
// participle, which then says what is wrong. The tree is good until the
// next parse: lower it first.
func (r *rangeParser) parse(ch chunk) (*gScript, error) {
	var err error
	if r.toks, err = appendTokens(r.toks[:0], r.lexer(ch)); err == nil {
		r.nodes.reset()
		d := descent{toks: r.toks, nodes: &r.nodes}
		if g, ok := d.parseScript(); ok {
			return g, nil
		}
	}
	peek, err := lexer.Upgrade(r.lexer(ch))
	if err != nil {
		return nil, err
	}
	return parser().ParseFromLexer(peek)
}

// lexer lexes text[:ch.end] from ch.start, at top level.
func (r *rangeParser) lexer(ch chunk) *textLexer {
	at := r.src.PosAt(ch.start)
	return &textLexer{text: r.text[:ch.end], states: []lexState{stRoot}, macros: r.macros,
		pos: lexer.Position{Filename: r.src.Name, Offset: ch.start, Line: at.Line, Column: at.Col}}
}

// appendTokens appends the tokens of lex to toks, up to and with EOF.
func appendTokens(toks []lexer.Token, lex *textLexer) ([]lexer.Token, error) {
	for {
		t, err := lex.Next()
		if err != nil {
			return toks, err
		}
		toks = append(toks, t)
		if t.EOF() {
			return toks, nil
		}
	}
}

type chunk struct{ start, end int }

// scan lexes the whole script once. It reports lexical errors (unterminated
// strings and comments, characters no token starts with) and splits the script
// at the ends of top-level blocks. Chunks holding a lexical error are not parsed,
// so one bad string does not cascade into a page of syntax errors.
func scan(src *Source, text string, d *Diagnostics) []chunk {
	lex, err := lexerDef.LexString(src.Name, text)
	if err != nil {
		d.Add(Span{Start: src.PosAt(0), End: src.PosAt(0)}, "", "%v", err)
		return nil
	}
	var chunks []chunk
	var open []lexer.Token // the brackets not yet closed
	start, depth, bad := 0, 0, false
	defer func() {
		if len(open) > 0 {
			t := open[len(open)-1]
			p := src.PosAt(t.Pos.Offset)
			d.eofHint = fmt.Sprintf("the %q at %d:%d is never closed", t.Value, p.Line, p.Col)
		}
	}()
	for {
		tok, err := lex.Next()
		if err != nil {
			var perr participle.Error
			if errors.As(err, &perr) {
				badCharacter(d, src, perr.Position().Offset)
			} else {
				d.Add(Span{Start: src.PosAt(0), End: src.PosAt(0)}, "", "%v", err)
			}
			return chunks
		}
		if tok.EOF() {
			break
		}
		tokSpan := Span{Start: src.PosAt(tok.Pos.Offset), End: src.PosAt(tok.Pos.Offset + len(tok.Value))}
		switch tok.Type {
		case tBadString:
			d.Add(tokSpan, "close it with \" on the same line", "unterminated string")
			bad = true
		case tBadComment:
			tokSpan.End = src.PosAt(tok.Pos.Offset + 2)
			d.Add(tokSpan, "close it with */", "unterminated comment")
			bad = true
		case tHash:
			// Preprocessor lines start with # and were blanked: this one
			// is in the middle of a line.
			tokSpan.End = src.PosAt(tok.Pos.Offset + 1)
			d.Add(tokSpan, "comments are // or /* */; a preprocessor line (#define, #ifdef...) starts with #", "syntax error: unexpected \"#\"")
			bad = true
		case tLBrace, tLParen, tLBrack, tAngleOpen, tPredOpen:
			depth++
			open = append(open, tok)
		case tRBrace, tRParen, tRBrack, tAngleClose, tPredClose:
			depth--
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
		}
		if depth == 0 && (tok.Type == tRBrace || tok.Type == tAngleClose) {
			end := tok.Pos.Offset + len(tok.Value)
			if !bad {
				chunks = append(chunks, chunk{start, end})
			}
			start, bad = end, false
		}
	}
	if !bad && strings.TrimSpace(stripComments(text[start:])) != "" {
		chunks = append(chunks, chunk{start, len(text)})
	}
	return chunks
}

// stripComments removes // and /* */ comments, for deciding whether a tail of
// the script holds anything but comments.
func stripComments(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "//"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return b.String()
			}
			i += j
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			i += j + 3
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func addParseError(d *Diagnostics, src *Source, text string, err error) {
	var perr participle.Error
	if !errors.As(err, &perr) {
		d.Add(Span{Start: src.PosAt(0), End: src.PosAt(0)}, "", "%v", err)
		return
	}
	pos := perr.Position()
	start := Pos{Offset: pos.Offset, Line: pos.Line, Col: pos.Column}
	var ut *participle.UnexpectedTokenError
	if errors.As(err, &ut) && ut.Unexpected.EOF() {
		// Point just after the last thing written, not past trailing blank lines.
		end := min(pos.Offset, len(text))
		for end > 0 && isSpace(text[end-1]) {
			end--
		}
		start = src.PosAt(end)
	}
	msg, hint, width := explainSyntax(src, text, perr)
	if errors.As(err, &ut) && ut.Unexpected.EOF() && d.eofHint != "" {
		hint = d.eofHint
	}
	end := start
	end.Offset += width
	end.Col += width
	d.Add(Span{Start: start, End: end}, hint, "%s", msg)
}

// explainSyntax turns participle's message into ours, with a hint for the
// mistakes people make most.
func explainSyntax(src *Source, text string, perr participle.Error) (msg, hint string, width int) {
	m := perr.Message()
	width = 1
	var ut *participle.UnexpectedTokenError
	if errors.As(perr, &ut) {
		tok := ut.Unexpected
		width = max(len(tok.Value), 1)
		what := fmt.Sprintf("%q", tok.Value)
		if tok.EOF() {
			what, width = "end of script", 1
		}
		if msg, hint, ok := unsupportedConstruct(text, tok.Pos.Offset); ok {
			return msg, hint, width
		}
		msg = "syntax error: unexpected " + what
		if exp := ut.Expect; exp != "" {
			msg += ", expected " + prettyExpect(exp)
		}
		hint = syntaxHint(text, tok, ut.Expect)
		return msg, hint, width
	}
	return "syntax error: " + m, "", 1
}

func prettyExpect(e string) string {
	r := strings.NewReplacer("<probespec>", "a probe such as skb:*", "<ident>", "a name",
		"<int>", "a number", "<string>", "a string", "<lbrace>", "\"{\"", "<rbrace>", "\"}\"",
		"<angleopen>", "\"<\"", "<angleclose>", "\">\"", "<predclose>", "\"/\"", "<predopen>", "\"/\"",
		"<rparen>", "\")\"", "<rbrack>", "\"]\"", "<lparen>", "\"(\"")
	return r.Replace(e)
}

func syntaxHint(text string, tok lexer.Token, expect string) string {
	before := strings.TrimRight(text[:min(tok.Pos.Offset, len(text))], " \t")
	switch {
	case tok.EOF() && strings.Contains(expect, "rbrace"):
		return "a block opened with { needs a closing }"
	case tok.EOF() && strings.Contains(expect, "angleclose"):
		return "a block opened with < needs a closing >"
	case tok.EOF() && strings.Contains(expect, "predclose"):
		return "a predicate is written /expr/"
	case tok.EOF():
		return "the script ends in the middle of a probe"
	case tok.Value == "=" && strings.HasSuffix(before, "="):
		return "one = too many"
	case tok.Value == "=":
		return "compare with ==; = assigns, and only in a statement"
	case tok.Value == "}" || tok.Value == ")" || tok.Value == "]":
		return "this closes nothing here: check that (), [] and {} pair up"
	case tok.Value == ">":
		return "a > outside parentheses ends a < > block; write comparisons there as (a > b)"
	}
	return ""
}

// badCharacter reports the text the lexer stopped at: a byte that is not
// UTF-8, a variable name with letters beyond ASCII, or another character.
func badCharacter(d *Diagnostics, src *Source, off int) {
	text := src.Text
	r, size := utf8.DecodeRuneInString(text[off:])
	span := Span{Start: src.PosAt(off), End: src.PosAt(off + size)}
	switch {
	case r == utf8.RuneError && size == 1:
		d.Add(span, "scripts are UTF-8 text", "syntax error: byte 0x%02x is not UTF-8", text[off])
	case (r == '$' || r == '@') && off+1 < len(text):
		end := off + 1
		for end < len(text) {
			c, n := utf8.DecodeRuneInString(text[end:])
			if c != '_' && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
				break
			}
			end += n
		}
		if end > off+1 {
			span.End = src.PosAt(end)
			d.Add(span, "names are ASCII letters, digits and _", "syntax error: invalid name %s", text[off:end])
			return
		}
		d.Add(span, "", "syntax error: unexpected character %q", string(r))
	default:
		d.Add(span, "", "syntax error: unexpected character %q", string(r))
	}
}
