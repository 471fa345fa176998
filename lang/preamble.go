package lang

import (
	"regexp"
	"strings"
)

// bpftrace's preamble: before, between and after the probes, a script
// may define C types (struct, union, enum), macros, and declare maps.
// scan splits a script after each top-level block, so a struct's or a
// macro's definition is a chunk of its own (its } ends it); a map
// declaration, having no block, starts the chunk of what follows it.
// preamble takes these items off the start of a chunk and returns the
// rest, which is parsed as probes.

// MapDecl is bpftrace's map declaration, `let @name = hash(100);`: Type
// is hash, lruhash, percpuhash, percpulruhash or percpuarray, Max the
// most elements it holds.
type MapDecl struct {
	At       Span
	Name     string
	NameSpan Span
	Type     string
	TypeSpan Span
	Max      uint64
}

// Span returns the source span of the node.
func (n *MapDecl) Span() Span { return n.At }

// MapDeclTypes are the map types a declaration names, and what each is.
var MapDeclTypes = map[string]string{
	"hash":          "BPF_MAP_TYPE_HASH",
	"lruhash":       "BPF_MAP_TYPE_LRU_HASH",
	"percpuhash":    "BPF_MAP_TYPE_PERCPU_HASH",
	"percpulruhash": "BPF_MAP_TYPE_LRU_PERCPU_HASH",
	"percpuarray":   "BPF_MAP_TYPE_PERCPU_ARRAY",
}

var (
	mapDeclRe = regexp.MustCompile(`^let\s+@(\w*)\s*=\s*(\w+)\s*\(\s*([^()]*?)\s*\)\s*;?`)
	cDefRe    = regexp.MustCompile(`^(struct|union|enum)\b\s*(\w*)\s*\{`)
	macroRe   = regexp.MustCompile(`^macro\s+(\w+)\s*\(([^()]*)\)\s*\{`)
	typedefRe = regexp.MustCompile(`^typedef\b`)
	importRe  = regexp.MustCompile(`^import\b`)
)

// preamble parses the preamble items at the start of ch into the script
// (MapDecls, Types) and the parser's macros, and returns what is left of
// ch: empty where the chunk was all preamble.
func (r *rangeParser) preamble(ch chunk, s *Script, d *Diagnostics) chunk {
	for {
		ch.start = skipTrivia(r.text, ch.start, ch.end)
		if ch.start >= ch.end {
			return ch
		}
		rest := r.text[ch.start:ch.end]
		at := func(n int) Span { return Span{Start: r.src.PosAt(ch.start), End: r.src.PosAt(ch.start + n)} }
		switch {
		case rest[0] == ';':
			ch.start++
		case mapDeclRe.MatchString(rest):
			m := mapDeclRe.FindStringSubmatchIndex(rest)
			r.mapDecl(s, d, ch.start, rest, m)
			ch.start += m[1]
		case strings.HasPrefix(rest, "let") && strings.HasPrefix(strings.TrimLeft(rest[3:], " \t\r\n"), "@"):
			d.Add(at(3), "declare a map as let @name = hash(N); (lruhash, percpuhash, percpulruhash, percpuarray)", "syntax error in a map declaration")
			ch.start = ch.end
		case cDefRe.MatchString(rest):
			m := cDefRe.FindStringSubmatchIndex(rest)
			if def := r.cTypeDef(d, ch.start, ch.end, m); def != nil {
				s.Types = append(append(s.Types, def.Nested...), def)
			}
			return chunk{ch.end, ch.end}
		case macroRe.MatchString(rest):
			m := macroRe.FindStringSubmatchIndex(rest)
			r.macroDef(d, ch, m)
			return chunk{ch.end, ch.end}
		case typedefRe.MatchString(rest):
			d.Add(at(7), "define the struct itself (struct NAME { ... }) and name it struct NAME", "typedef is not supported")
			return chunk{ch.end, ch.end}
		case strings.HasPrefix(rest, "__attribute__"):
			ch.start += r.typeAttrs(s, d, ch.start, ch.end)
		case importRe.MatchString(rest):
			// The imports resolved are blanked (import.go): this one
			// is not at the start of a line, or names no file.
			if !strings.HasPrefix(strings.TrimLeft(rest[len("import"):], " \t"), `"`) {
				d.Add(at(6), `name it in quotes: import "lib.bt";`, "an import names a file or directory in quotes")
			} else {
				d.Add(at(6), `write each import on a line of its own, at the top level: import "lib.bt";`, "expected an import at the start of a line")
			}
			return chunk{ch.end, ch.end}
		default:
			return ch
		}
	}
}

// skipTrivia returns the offset of the first character of text[from:to]
// that is not whitespace or a comment.
func skipTrivia(text string, from, to int) int {
	for from < to {
		_, n := matchTrivia(text[from:to])
		if n == 0 {
			return from
		}
		from += n
	}
	return from
}

// mapDecl reads `let @name = type(max);` (m the submatch offsets in rest,
// which starts at off).
func (r *rangeParser) mapDecl(s *Script, d *Diagnostics, off int, rest string, m []int) {
	span := func(a, b int) Span { return Span{Start: r.src.PosAt(off + a), End: r.src.PosAt(off + b)} }
	md := &MapDecl{At: span(0, m[1]), Name: rest[m[2]:m[3]], NameSpan: span(m[2]-1, m[3]),
		Type: rest[m[4]:m[5]], TypeSpan: span(m[4], m[5])}
	if _, ok := MapDeclTypes[md.Type]; !ok {
		names := make([]string, 0, len(MapDeclTypes))
		for n := range MapDeclTypes {
			names = append(names, n)
		}
		hint := "the map types are hash, lruhash, percpuhash, percpulruhash and percpuarray"
		if sg := Suggest(md.Type, names); sg != "" {
			hint = "did you mean " + sg + "?"
		}
		d.Add(md.TypeSpan, hint, "unknown map type %q", md.Type)
		return
	}
	arg := rest[m[6]:m[7]]
	n, err := parseInt(arg)
	if err != nil || n == 0 || n > 1<<26 {
		d.Add(span(m[6], max(m[7], m[6]+1)), "give the most elements it holds: let @"+md.Name+" = "+md.Type+"(1024);",
			"a map declaration takes one argument, its max entries, from 1 to %d", 1<<26)
		return
	}
	md.Max = n
	for _, prev := range s.MapDecls {
		if prev.Name == md.Name {
			d.Add(md.NameSpan, "declare each map once", "@%s is declared twice", md.Name)
			return
		}
	}
	s.MapDecls = append(s.MapDecls, md)
}
