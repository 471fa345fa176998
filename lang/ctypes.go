package lang

import (
	"fmt"
	"strconv"
	"strings"
)

// CTypeDef is a C type a script defines in its preamble, as bpftrace
// takes them: `struct Foo { int a; char b[10]; }`, a union, or an enum,
// `enum { A = 1, B }` (Name may be empty). The checker lays a struct out
// as C does and reads it as it reads the kernel's BTF types; an enum's
// values are constants.
type CTypeDef struct {
	At       Span
	Kind     string // "struct", "union" or "enum"
	Name     string
	NameSpan Span
	Fields   []*CField
	Values   []*CEnumValue
	// Attrs are the attributes after its closing brace (bpftrace 0.26):
	// struct Foo { ... } __attribute__((packed));
	Attrs []CAttr
	// Nested are the types its members define in place, as C allows:
	// struct Foo { struct Bar { int x; } bar; struct { int y; } anon; }
	// (an anonymous one named as clang names it, "(anonymous at L:C)").
	// The preamble lists them before it.
	Nested []*CTypeDef
}

// CField is a member of a defined struct or union: `unsigned int a;`,
// `char *p;`, `int b[4][2];`, `u32 f:3;`. Type is the base type's words
// as written ("unsigned int", "struct Bar", "u32"), Ptr the stars, Dims
// the array lengths, Bits a bitfield's width (0: not one).
type CField struct {
	At       Span
	Type     string
	TypeSpan Span
	Ptr      int
	Dims     []int
	Name     string
	Bits     int
}

// CEnumValue is an enumerator and its value.
type CEnumValue struct {
	At    Span
	Name  string
	Value int64
}

// Span returns the source span of the node.
func (n *CTypeDef) Span() Span { return n.At }

// ctok is a token of a C definition: a word, a number or a punctuation
// character, at an offset of the script.
type ctok struct {
	text string
	off  int
}

// cTokens splits C text (text[from:to]) into tokens, comments skipped.
func cTokens(text string, from, to int) []ctok {
	var out []ctok
	for i := from; i < to; {
		if _, n := matchTrivia(text[i:to]); n > 0 {
			i += n
			continue
		}
		c := text[i]
		n := 1
		switch {
		case isIdentChar(c):
			n = identLen(text[i:to])
		}
		out = append(out, ctok{text[i : i+n], i})
		i += n
	}
	return out
}

// cParser reads the tokens of one definition.
type cParser struct {
	r    *rangeParser
	d    *Diagnostics
	toks []ctok
	i    int
	end  int // the offset of the definition's closing }
	bad  bool
}

func (p *cParser) peek() ctok {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ctok{"}", p.end}
}

func (p *cParser) next() ctok { t := p.peek(); p.i++; return t }

func (p *cParser) span(a, b ctok) Span {
	return Span{Start: p.r.src.PosAt(a.off), End: p.r.src.PosAt(b.off + len(b.text))}
}

func (p *cParser) errorf(t ctok, hint, format string, args ...any) {
	if !p.bad {
		p.d.Add(p.span(t, t), hint, format, args...)
	}
	p.bad = true
}

// cTypeDef parses the definition that is the chunk text[start:end] (m
// the submatch offsets of cDefRe in it).
func (r *rangeParser) cTypeDef(d *Diagnostics, start, end int, m []int) *CTypeDef {
	close := strings.LastIndexByte(r.text[:end], '}')
	def := &CTypeDef{At: Span{Start: r.src.PosAt(start), End: r.src.PosAt(end)}, Kind: r.text[start+m[2] : start+m[3]],
		Name: r.text[start+m[4] : start+m[5]], NameSpan: Span{Start: r.src.PosAt(start + m[4]), End: r.src.PosAt(start + m[5])}}
	p := &cParser{r: r, d: d, toks: cTokens(r.text, start+m[1], close), end: close}
	if def.Kind == "enum" {
		p.enumValues(def)
	} else {
		if def.Name == "" {
			d.Add(def.At, "name it: struct NAME { ... }, and cast to (struct NAME *)", "an anonymous %s cannot be used", def.Kind)
			return nil
		}
		p.fields(def)
	}
	if p.bad {
		return nil
	}
	return def
}

// cTypeWords are the words a C base type is made of, besides a name.
var cTypeWords = map[string]bool{"unsigned": true, "signed": true, "int": true, "char": true, "short": true, "long": true,
	"const": true, "volatile": true, "_Bool": true}

// fields parses `TYPE DECL [, DECL]... ;` up to the closing brace.
func (p *cParser) fields(def *CTypeDef) {
	for !p.bad && p.i < len(p.toks) {
		first := p.peek()
		if first.text == ";" {
			p.next()
			continue
		}
		var words []string
		last := first
		onlyQualifiers := func() bool {
			for _, w := range words {
				if w != "const" && w != "volatile" {
					return false
				}
			}
			return true
		}
	base:
		for p.i < len(p.toks) {
			t := p.peek()
			switch {
			case t.text == "struct" || t.text == "union" || t.text == "enum":
				p.next()
				if p.peek().text == "{" || (p.i+1 < len(p.toks) && p.toks[p.i+1].text == "{") {
					// A type defined in place: struct Bar { ... } bar;
					name, ok := p.nested(def, t)
					if !ok {
						return
					}
					words = append(words, t.text+" "+name)
					last = p.toks[p.i-1]
					break base
				}
				name := p.next()
				if !isIdentStart(name.text[0]) {
					p.errorf(name, "name the type: "+t.text+" NAME", "expected a %s's name", t.text)
					return
				}
				words = append(words, t.text+" "+name.text)
				last = name
				break base
			case cTypeWords[t.text]:
				words = append(words, t.text)
				last = p.next()
			case isIdentStart(t.text[0]) && onlyQualifiers():
				// A type's name (u32, uint64_t, int32): the whole base type.
				words = append(words, t.text)
				last = p.next()
				break base
			default:
				break base
			}
		}
		var kept []string
		for _, w := range words {
			if w != "const" && w != "volatile" {
				kept = append(kept, w)
			}
		}
		if len(kept) == 0 {
			p.errorf(first, "a member is TYPE NAME;, e.g. int a; or char name[16];", "expected a member's type")
			return
		}
		typ, typeSpan := strings.Join(kept, " "), p.span(first, last)
		// A lone type word followed by ; or [ is the name, not the type:
		// `int int;` is not C, so the last word is always the name.
		for {
			f := &CField{Type: typ, TypeSpan: typeSpan}
			for p.peek().text == "*" {
				p.next()
				f.Ptr++
			}
			name := p.next()
			if !isIdentStart(name.text[0]) || cTypeWords[name.text] {
				p.errorf(name, "a member is TYPE NAME;, e.g. int a; or char name[16];", "expected a member's name, got %q", name.text)
				return
			}
			f.Name = name.text
			end := name
			for p.peek().text == "[" {
				p.next()
				n := p.next()
				v, err := strconv.ParseUint(n.text, 0, 32)
				if err != nil || v == 0 {
					p.errorf(n, "an array member has a constant length: char name[16];", "expected an array length, got %q", n.text)
					return
				}
				if cl := p.next(); cl.text != "]" {
					p.errorf(cl, "", "expected \"]\", got %q", cl.text)
					return
				}
				f.Dims = append(f.Dims, int(v))
				end = p.toks[p.i-1]
			}
			if p.peek().text == ":" {
				p.next()
				n := p.next()
				v, err := strconv.ParseUint(n.text, 0, 8)
				if err != nil || v == 0 || v > 64 {
					p.errorf(n, "a bitfield is TYPE NAME : WIDTH, the width from 1 to 64", "expected a bitfield width, got %q", n.text)
					return
				}
				f.Bits, end = int(v), n
			}
			f.At = Span{Start: typeSpan.Start, End: p.span(end, end).End}
			def.Fields = append(def.Fields, f)
			sep := p.next()
			if sep.text == "," {
				continue
			}
			if p.i > len(p.toks) {
				// The last member before } without its ; (clang warns
				// and takes it, as bpftrace does).
				break
			}
			if sep.text != ";" {
				p.errorf(sep, "end each member with ;", "expected \";\" after member %s, got %q", f.Name, sep.text)
				return
			}
			break
		}
	}
}

// enumValues parses `A [= VALUE] [, B ...] [,]`.
func (p *cParser) enumValues(def *CTypeDef) {
	next := int64(0)
	for !p.bad && p.i < len(p.toks) {
		name := p.next()
		if !isIdentStart(name.text[0]) {
			p.errorf(name, "an enum is enum NAME { A, B = 2, C }", "expected an enumerator's name, got %q", name.text)
			return
		}
		v := &CEnumValue{At: p.span(name, name), Name: name.text, Value: next}
		if p.peek().text == "=" {
			p.next()
			neg := false
			if p.peek().text == "-" {
				p.next()
				neg = true
			}
			n := p.next()
			u, err := parseInt(n.text)
			if err != nil {
				found := false
				for _, prev := range def.Values {
					if prev.Name == n.text {
						u, found = uint64(prev.Value), true
					}
				}
				if !found {
					p.errorf(n, "an enumerator's value is an integer or an enumerator before it", "expected the value of %s, got %q", name.text, n.text)
					return
				}
			}
			v.Value = int64(u)
			if neg {
				v.Value = -v.Value
			}
			v.At = p.span(name, n)
		}
		next = v.Value + 1
		def.Values = append(def.Values, v)
		if p.i >= len(p.toks) {
			return
		}
		if sep := p.next(); sep.text != "," {
			p.errorf(sep, "separate enumerators with ,", "expected \",\" after %s, got %q", name.text, sep.text)
			return
		}
	}
}

// nested parses a type defined in a member's place, `struct [NAME] {
// ... }` (the keyword taken), adds it to def.Nested and returns its name.
func (p *cParser) nested(def *CTypeDef, kw ctok) (string, bool) {
	name := ""
	nameTok := kw
	if p.peek().text != "{" {
		nameTok = p.next()
		if !isIdentStart(nameTok.text[0]) {
			p.errorf(nameTok, "name the type: "+kw.text+" NAME", "expected a %s's name", kw.text)
			return "", false
		}
		name = nameTok.text
	}
	open := p.i
	p.next() // {
	depth := 1
	for p.i < len(p.toks) && depth > 0 {
		switch p.next().text {
		case "{":
			depth++
		case "}":
			depth--
		}
	}
	if depth > 0 {
		p.errorf(p.toks[open], "close it with }", "this %s has no closing brace", kw.text)
		return "", false
	}
	closeTok := p.toks[p.i-1]
	if name == "" {
		pos := p.r.src.PosAt(kw.off)
		name = fmt.Sprintf("(anonymous at %d:%d)", pos.Line, pos.Col)
	}
	n := &CTypeDef{At: p.span(kw, closeTok), Kind: kw.text, Name: name, NameSpan: p.span(nameTok, nameTok)}
	sub := &cParser{r: p.r, d: p.d, toks: p.toks[open+1 : p.i-1], end: closeTok.off}
	if kw.text == "enum" {
		sub.enumValues(n)
	} else {
		sub.fields(n)
	}
	if sub.bad {
		p.bad = true
		return "", false
	}
	def.Nested = append(def.Nested, n.Nested...)
	n.Nested = nil
	def.Nested = append(def.Nested, n)
	return name, true
}
