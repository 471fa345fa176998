package lang

import (
	"strings"
)

// bpftrace runs its scripts through a C preprocessor; skbtrace has a small
// one of its own, enough for the scripts bpftrace ships:
//   - #define NAME value: a constant (or any expression), substituted for
//     NAME wherever the name appears after the line (macro.go);
//     #undef NAME ends it;
//   - #ifdef NAME, #ifndef NAME, #else, #endif, nested; #if 0 and #if 1;
//     BPFTRACE_HAVE_BTF is defined, as bpftrace defines it where the kernel
//     has BTF: skbtrace always reads types from BTF;
//   - #include reads a header's #define constants where it is found (-I
//     directories, the script's; include.go), not its types: BTF serves
//     the types the headers would declare; #pragma lines are ignored.
//
// The other constructs of C's preprocessor (function-like macros, #if with
// an expression, #elif) are errors that say what to write instead. Every
// directive line, and every line of a branch not taken, is blanked with
// spaces, newlines kept, so that positions in the text stay the file's.

// condFrame is an open #ifdef, #ifndef or #if.
type condFrame struct {
	at      Span   // the directive, for "never closed"
	what    string // "#ifdef", "#ifndef", "#if"
	outer   bool   // the region around it is compiled
	taken   bool   // one of its branches so far was
	active  bool   // the current branch is compiled
	sawElse bool
}

// preprocessor is one run over a script's text.
type preprocessor struct {
	src    *Source
	d      *Diagnostics
	out    []byte
	macros *macros
	conds  []*condFrame
}

// preprocess applies the preprocessor to text (the script's text with its
// shebang blanked): it returns the text to lex, of the same length and
// lines, and the macros defined in it.
func preprocess(src *Source, text string, d *Diagnostics) (string, *macros) {
	m := newMacros()
	p := &preprocessor{src: src, d: d, out: []byte(text), macros: m}
	for _, inc := range src.Includes {
		// --include FILE: as #include FILE before the script.
		p.includeHeader(inc, true, 0, 0)
	}
	if !strings.Contains(text, "#") {
		return text, m
	}
	inComment := false
	for start := 0; start < len(text); {
		end := lineEndAt(text, start)
		startsInComment := inComment
		// A directive's line may continue on the next after a backslash.
		if !startsInComment && isDirective(text[start:end]) {
			for end < len(text) && strings.HasSuffix(strings.TrimRight(text[start:end], " \t\r"), "\\") {
				end = lineEndAt(text, end+1)
			}
			p.directive(start, end)
			p.blank(start, end)
		} else {
			inComment = scanComments(text[start:end], inComment)
			if !p.active() {
				p.blank(start, end)
			}
		}
		start = end + 1
	}
	for _, c := range p.conds {
		d.Add(c.at, "close it with #endif", "%s without #endif", c.what)
	}
	return string(p.out), m
}

// lineEndAt is the offset of the newline ending the line at start, or len(s).
func lineEndAt(s string, start int) int {
	if i := strings.IndexByte(s[start:], '\n'); i >= 0 {
		return start + i
	}
	return len(s)
}

// isDirective reports whether a line is a preprocessor line: # first, after
// blanks (a shebang has been blanked already).
func isDirective(line string) bool {
	return strings.HasPrefix(strings.TrimLeft(line, " \t"), "#")
}

// scanComments reports whether a line ends inside a /* */ comment, given
// whether it starts in one; strings and // comments are skipped.
func scanComments(line string, in bool) bool {
	for i := 0; i < len(line); i++ {
		switch {
		case in:
			if strings.HasPrefix(line[i:], "*/") {
				in = false
				i++
			}
		case strings.HasPrefix(line[i:], "//"):
			return false
		case strings.HasPrefix(line[i:], "/*"):
			in = true
			i++
		case line[i] == '"':
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' {
					i++
				}
			}
		}
	}
	return in
}

// blank replaces text[start:end] with spaces, newlines kept.
func (p *preprocessor) blank(start, end int) {
	for i := start; i < end; i++ {
		if p.out[i] != '\n' {
			p.out[i] = ' '
		}
	}
}

// active reports whether the current line is compiled.
func (p *preprocessor) active() bool {
	return len(p.conds) == 0 || p.conds[len(p.conds)-1].active
}

func (p *preprocessor) span(start, end int) Span {
	return Span{Start: p.src.PosAt(start), End: p.src.PosAt(end)}
}

// directive handles the preprocessor line text[start:end].
func (p *preprocessor) directive(start, end int) {
	line := p.src.Text[start:end]
	hash := start + strings.IndexByte(line, '#')
	rest := p.src.Text[hash+1 : end]
	nameAt := hash + 1 + len(rest) - len(strings.TrimLeft(rest, " \t"))
	name := p.src.Text[nameAt : nameAt+identLen(p.src.Text[nameAt:end])]
	argAt := nameAt + len(name)
	arg := stripLineComment(p.src.Text[argAt:end])
	argAt += len(arg) - len(strings.TrimLeft(arg, " \t"))
	arg = strings.TrimSpace(strings.ReplaceAll(arg, "\\\n", " "))
	at := p.span(hash, nameAt+len(name))
	whole := p.span(hash, hash+len(strings.TrimRight(p.src.Text[hash:end], " \t\r")))
	switch name {
	case "ifdef", "ifndef":
		id := p.condName(name, arg, argAt, whole)
		defined := p.macros.lookup(id, start) != nil
		p.push(at, "#"+name, defined == (name == "ifdef"))
	case "if":
		switch arg {
		case "0", "1":
			p.push(at, "#if", arg == "1")
		default:
			p.d.Add(whole, "test a name with #ifdef NAME or #ifndef NAME (BPFTRACE_HAVE_BTF is defined), or write #if 0 / #if 1",
				"#if with an expression is not supported")
			p.push(at, "#if", true)
		}
	case "elif", "elifdef", "elifndef":
		if len(p.conds) > 0 {
			p.d.Add(at, "write #else and a nested #ifdef NAME / #ifndef NAME ... #endif", "#%s is not supported", name)
		}
		p.flip(at, name)
	case "else":
		p.flip(at, name)
	case "endif":
		if len(p.conds) == 0 {
			p.d.Add(at, "remove it, or open a conditional before it with #ifdef NAME or #ifndef NAME", "#endif without #ifdef")
			return
		}
		p.conds = p.conds[:len(p.conds)-1]
	default:
		if p.active() {
			p.activeDirective(name, arg, argAt, at, whole)
		}
	}
}

// activeDirective handles the directives that act only where the text is
// compiled: #define, #undef, #include, #pragma, #error.
func (p *preprocessor) activeDirective(name, arg string, argAt int, at, whole Span) {
	switch name {
	case "define":
		p.define(arg, argAt, whole)
	case "undef":
		id := p.condName(name, arg, argAt, whole)
		p.macros.undefine(id, whole.End.Offset)
	case "include", "include_next":
		// Types come from BTF; a header found gives its #defines
		// (include.go).
		if inc, quoted, ok := headerName(arg); ok {
			p.includeHeader(inc, quoted, whole.End.Offset, 0)
		}
	case "pragma", "":
		// An empty # is C's null directive.
	case "error":
		p.d.Add(whole, "", "#error %s", arg)
	default:
		p.d.Add(at, "skbtrace's preprocessor has #define NAME value, #undef, #ifdef, #ifndef, #else, #endif, #if 0/1, and ignores #include",
			"#%s is not supported", name)
	}
}

// condName is the single name #ifdef, #ifndef and #undef take.
func (p *preprocessor) condName(directive, arg string, argAt int, whole Span) string {
	n := identLen(arg)
	if n == 0 || !isIdentStart(arg[0]) || strings.TrimSpace(arg[n:]) != "" {
		p.d.Add(whole, "write #"+directive+" NAME", "#%s needs one name", directive)
		return ""
	}
	return arg[:n]
}

// push opens a conditional whose first branch is cond.
func (p *preprocessor) push(at Span, what string, cond bool) {
	outer := p.active()
	p.conds = append(p.conds, &condFrame{at: at, what: what, outer: outer, taken: cond, active: outer && cond})
}

// flip starts the #else branch of the innermost conditional.
func (p *preprocessor) flip(at Span, name string) {
	if len(p.conds) == 0 {
		p.d.Add(at, "remove it, or open a conditional before it with #ifdef NAME or #ifndef NAME", "#%s without #ifdef", name)
		return
	}
	c := p.conds[len(p.conds)-1]
	if c.sawElse {
		p.d.Add(at, "a conditional has one #else; close it with #endif", "#%s after #else", name)
	}
	c.sawElse = true
	c.active = c.outer && !c.taken
	c.taken = true
}

// stripLineComment cuts a // or /* */ comment off a directive's text, as
// C's preprocessor removes comments before it reads directives.
func stripLineComment(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(s))
			b.WriteString(s[i:j])
			i = j - 1
		case strings.HasPrefix(s[i:], "//"):
			return b.String()
		case strings.HasPrefix(s[i:], "/*"):
			e := strings.Index(s[i+2:], "*/")
			if e < 0 {
				return b.String()
			}
			b.WriteByte(' ')
			i += e + 3
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
