package lang

import "strings"

// bpftrace 0.26 takes GCC's attributes after a C struct's or union's
// closing brace, as clang does:
//
//	struct Foo { char a; int b; } __attribute__((packed, aligned(2)));
//
// The attributes are parsed here, each a name and an optional integer
// argument; the checker lays the type out by them (packed, aligned) and
// says which it does not honour.

// CAttr is one attribute of a type: its name as written (packed,
// __packed__, aligned) and its argument, where it has one (aligned(8)).
type CAttr struct {
	At     Span
	Name   string
	Arg    uint64
	HasArg bool
}

// typeAttrs reads `__attribute__((a, b(N)))` at text[start:end], which
// must follow the last C type definition's closing brace (comments and
// blanks between), attaches them to that type and returns the bytes read.
func (r *rangeParser) typeAttrs(s *Script, d *Diagnostics, start, end int) int {
	span := func(a, b int) Span { return Span{Start: r.src.PosAt(a), End: r.src.PosAt(b)} }
	kw := len("__attribute__")
	var def *CTypeDef
	if n := len(s.Types); n > 0 && s.Types[n-1].Kind != "enum" && skipTrivia(r.text, s.Types[n-1].At.End.Offset, start) == start {
		def = s.Types[n-1]
	}
	toks := cTokens(r.text, start+kw, end)
	// ( ( list ) ): the outer pair's close is where depth is back at 0.
	if len(toks) < 2 || toks[0].text != "(" || toks[1].text != "(" {
		d.Add(span(start, start+kw), "write __attribute__((packed))", "expected (( after __attribute__")
		return end - start
	}
	depth, close := 0, -1
	for i, t := range toks {
		switch t.text {
		case "(":
			depth++
		case ")":
			depth--
		}
		if depth == 0 {
			close = i
			break
		}
	}
	if close < 0 || close < 3 || toks[close-1].text != ")" {
		d.Add(span(start, start+kw), "close it: __attribute__((packed))", "unbalanced parentheses in __attribute__")
		return end - start
	}
	attrs, ok := r.attrList(d, toks[2:close-1])
	stop := toks[close].off + 1
	if !ok {
		return stop - start
	}
	if def == nil {
		d.Add(span(start, stop), "put it after a struct's closing brace: struct Foo { ... } __attribute__((packed));",
			"__attribute__ must follow a struct or union definition")
		return stop - start
	}
	def.Attrs = append(def.Attrs, attrs...)
	return stop - start
}

// attrList reads the attributes between (( and )): names, each with an
// optional integer argument in parentheses, separated by commas.
func (r *rangeParser) attrList(d *Diagnostics, toks []ctok) ([]CAttr, bool) {
	span := func(a, b ctok) Span { return Span{Start: r.src.PosAt(a.off), End: r.src.PosAt(b.off + len(b.text))} }
	var out []CAttr
	for i := 0; i < len(toks); {
		name := toks[i]
		if !isIdentStart(name.text[0]) {
			d.Add(span(name, name), "an attribute is a name, with an argument in parentheses: packed, aligned(8)", "expected an attribute's name")
			return nil, false
		}
		a := CAttr{At: span(name, name), Name: name.text}
		i++
		if i < len(toks) && toks[i].text == "(" {
			j := i + 1
			var arg strings.Builder
			for j < len(toks) && toks[j].text != ")" {
				arg.WriteString(toks[j].text)
				j++
			}
			if j >= len(toks) {
				d.Add(span(name, toks[len(toks)-1]), "close it: "+name.text+"(N)", "unclosed ( after %s", name.text)
				return nil, false
			}
			v, err := parseInt(arg.String())
			if err != nil {
				d.Add(span(toks[i], toks[j]), "give an integer: "+name.text+"(8)", "%s's argument must be an integer", name.text)
				return nil, false
			}
			a.Arg, a.HasArg, a.At = v, true, span(name, toks[j])
			i = j + 1
		}
		out = append(out, a)
		if i < len(toks) {
			if toks[i].text != "," {
				d.Add(span(toks[i], toks[i]), "separate attributes with commas: packed, aligned(8)", "unexpected %q in __attribute__", toks[i].text)
				return nil, false
			}
			i++
		}
	}
	return out, true
}
