package check

import (
	"slices"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// call checks a builtin call. asStmt is set for a call used as a statement,
// asMapValue for the value of a map assignment (where aggregations belong).
func (c *checker) call(e *lang.CallExpr, asStmt, asMapValue bool) types.Type {
	f := stdlib.LookupFunc(e.Name)
	nameNd := nameNode{e.NameSpan}
	if why, ok := unsupportedBuiltins[e.Name]; ok && f == nil {
		c.errorf(nameNd, why, "bpftrace's %s() is not supported", e.Name)
		for _, a := range e.Args {
			c.expr(a)
		}
		return types.Bad
	}
	if f == nil {
		names := stdlib.FuncNames()
		if !asStmt {
			// A call used as a value is not one of the statements
			// (cnt() is not cat()).
			names = slices.DeleteFunc(names, func(n string) bool { return stdlib.LookupFunc(n).Stmt })
		}
		hint := didYouMean(e.Name, names)
		if stdlib.LookupField(e.Name) != nil {
			hint = e.Name + " is a value, not a function: write " + e.Name + " without ()"
		}
		c.errorf(nameNd, hint, "unknown function %q", e.Name)
		for _, a := range e.Args {
			c.expr(a)
		}
		return types.Bad
	}
	c.info.Calls[e] = f
	misused := true
	switch {
	case f.Agg != types.AggNone && !asMapValue:
		c.errorf(e, "assign it to a map: @name[key] = "+e.Name+"(...)", "%s() is an aggregation and is only valid as a map's value", e.Name)
	case f.Stmt && !asStmt:
		c.errorf(e, "call it as a statement", "%s() has no value", e.Name)
	case f.Needs&stdlib.NeedSkb != 0 && !c.ctx.Skb && !c.xdpFrameFunc(e.Name):
		c.ctxErrorf(e, c.xdpLacksSkb(e.Name+"()"), "%s() needs an skb, and this probe has none", e.Name)
	default:
		misused = false
	}
	switch e.Name {
	case "printf", "cat", "errorf", "warnf", "debugf":
		c.printf(e)
		c.diagFormat(e)
		if misused {
			return types.Bad
		}
		return types.None
	case "print":
		c.print(e)
		if misused {
			return types.Bad
		}
		return types.None
	case "time":
		c.timeCall(e)
		return types.None
	case "capture":
		if !misused && len(e.Args) == 0 {
			c.capture(e)
		}
	case "pcap":
		if misused {
			return types.Bad
		}
		return c.pcap(e)
	}
	cc := &callCtx{c: c, e: e}
	for i, a := range e.Args {
		t := c.argType(f, i, a)
		if e.Name == "str" && i == 0 && t.Kind != types.Invalid {
			// str($1) is the parameter's text, a number's too.
			t = c.paramAsString(a, t)
		}
		cc.types = append(cc.types, t)
	}
	// A misused call's arguments are checked, but it gets no type for
	// later errors to cascade from.
	t := f.Infer(cc)
	if misused {
		return types.Bad
	}
	if t.Kind == types.Stack && t.Layout == "" {
		t.Layout = c.info.Config.StackMode // kstack() without a mode
	}
	if t.Kind == types.String && t.Cut && c.info.Config.TrailerSet {
		t.Layout = types.TrailerPrefix + c.info.Config.StrTruncTrailer
	}
	c.info.Types[e] = t // constCall's getopt reads it
	c.constCall(e)
	if e.Name == "delete" && len(e.Args) == 1 && cc.IsMap(0) {
		c.scalarDeletes = append(c.scalarDeletes, e)
	}
	return t
}

// argType checks one argument. Maps passed whole (clear(@m)) and map
// elements passed to delete are references, not reads.
func (c *checker) argType(f *stdlib.Func, i int, a lang.Expr) types.Type {
	if m, ok := a.(*lang.MapExpr); ok && ((f.Stmt && f.Name != "exit") || stdlib.ElemFuncs[f.Name]) {
		for _, k := range m.Keys {
			c.expr(k)
		}
		c.mapRef(m)
		t := types.Type{Kind: types.MapRef}
		c.info.Types[a] = t
		return t
	}
	return c.expr(a)
}

type callCtx struct {
	c     *checker
	e     *lang.CallExpr
	types []types.Type
}

func (cc *callCtx) NArgs() int { return len(cc.e.Args) }

func (cc *callCtx) Arg(i int) types.Type { return cc.types[i] }

func (cc *callCtx) ConstInt(i int) (int64, bool) { return cc.c.constInt(cc.e.Args[i]) }

func (cc *callCtx) MaxStrlen() int { return cc.c.info.Config.MaxStrlen }

func (cc *callCtx) ConstStr(i int) (string, bool) {
	k, ok := cc.c.info.Consts[cc.e.Args[i]]
	return k.Str, ok && k.IsStr
}

func (cc *callCtx) IsMapElem(i int) bool {
	m, ok := cc.e.Args[i].(*lang.MapExpr)
	return ok && len(m.Keys) > 0
}

func (cc *callCtx) IsMap(i int) bool {
	m, ok := cc.e.Args[i].(*lang.MapExpr)
	return ok && len(m.Keys) == 0
}

func (cc *callCtx) Errorf(i int, hint, format string, args ...any) {
	var n lang.Node = cc.e
	if i >= 0 && i < len(cc.e.Args) {
		n = cc.e.Args[i]
	}
	cc.c.errorf(n, hint, format, args...)
}

// printable reports whether a value can be printed by print() or %s.
func printable(t types.Type) bool {
	switch t.Kind {
	case types.Int, types.String, types.Addr, types.Ptr, types.Stack, types.Endpoint, types.Packet, types.Tuple:
		return true
	case types.Array:
		return intArray(t)
	case types.Struct:
		return structValue(t)
	}
	return false
}

func (c *checker) print(e *lang.CallExpr) {
	if len(e.Args) == 0 {
		c.errorf(e, "e.g. print(len, dev) or print(@drops)", "print() needs something to print")
		return
	}
	if m, ok := e.Args[0].(*lang.MapExpr); ok && len(m.Keys) == 0 && len(e.Args) == 1 {
		c.mapRef(m)
		c.info.Types[m] = types.Type{Kind: types.MapRef}
		return
	}
	if c.printTop(e) {
		return
	}
	for _, a := range e.Args {
		if m, ok := a.(*lang.MapExpr); ok && len(m.Keys) == 0 {
			if mi := c.info.Maps[m.Name]; mi != nil && mi.Value.Kind == types.Agg {
				c.errorf(a, "print a whole map on its own: print(@"+m.Name+"), or its top entries: print(@"+m.Name+", 10)", "a map is printed alone")
				continue
			}
		}
		t := c.expr(a)
		if t.Kind != types.Invalid && !printable(t) {
			c.errorf(a, valueHint(a, t), "cannot print %s", t)
		}
	}
}

// printf checks printf's format and arguments, and cat's: bpftrace's
// cat("/proc/%d/status", pid) names its file as printf formats.
func (c *checker) printf(e *lang.CallExpr) {
	if len(e.Args) == 0 {
		hint := `e.g. printf("%s %d\n", dev, len)`
		if e.Name == "cat" {
			hint = `e.g. cat("/proc/loadavg")`
		}
		c.errorf(e, hint, "%s needs a format string", e.Name)
		return
	}
	lit, ok := e.Args[0].(*lang.StrLit)
	if !ok {
		c.expr(e.Args[0])
		c.errorf(e.Args[0], "the format is fixed when the script is compiled", "%s's format must be a string literal", e.Name)
		return
	}
	c.expr(lit)
	verbs, err := stdlib.ParseFormat(lit.Value)
	if err != nil {
		c.errorf(lit, "conversions are %d %u %x %X %o %s %p %c, %g %e %f (an integer as a number with a fraction), %r %rx %rh (a buffer) and %%; hh and h truncate to 8 and 16 bits", "%s: %v", e.Name, err)
		return
	}
	c.info.Formats[e] = verbs
	n := stdlib.Conversions(verbs)
	if n != len(e.Args)-1 {
		c.errorf(e, "", "%s's format has %d conversions but %d arguments follow", e.Name, n, len(e.Args)-1)
	}
	i := 1
	for _, v := range verbs {
		if v.Conv == 0 || i >= len(e.Args) {
			continue
		}
		a := e.Args[i]
		i++
		t := c.expr(a)
		if t.Kind == types.Invalid {
			continue
		}
		switch v.Conv {
		case 's':
			if !printable(t) {
				c.errorf(a, "", "cannot print %s with %%s", t)
			}
		case 'p':
			if !t.IsScalar() {
				c.errorf(a, "", "%%p needs a pointer or integer, got %s", t)
			}
		case 'r':
			if t.Kind != types.String || t.Fmt != types.FmtBuf {
				c.errorf(a, "read the bytes with buf(): buf(pointer, length)", "%%r prints a buffer, got %s", t)
			}
		default:
			if !t.IsScalar() {
				hint := ""
				if printable(t) {
					hint = "print it with %s"
				}
				conv := string(v.Conv)
				if v.Conv == 'g' && v.Raw == 'r' {
					conv = "gr" // GFP flags
				}
				c.errorf(a, hint, "%%%s needs an integer, got %s", conv, t)
			}
		}
	}
	for ; i < len(e.Args); i++ {
		c.expr(e.Args[i])
	}
}

// timeCall checks bpftrace's time("%H:%M:%S "): one printf verb, 'T', whose
// flags are the strftime format, printed with the event's time.
func (c *checker) timeCall(e *lang.CallExpr) {
	format := "%H:%M:%S\n"
	switch {
	case len(e.Args) > 1:
		c.errorf(e, `the signature is time(["format"])`, "wrong number of arguments: got %d", len(e.Args))
		return
	case len(e.Args) == 1:
		lit, ok := e.Args[0].(*lang.StrLit)
		c.expr(e.Args[0])
		if !ok {
			c.errorf(e.Args[0], "the format is fixed when the script is compiled", "time's format must be a string literal")
			return
		}
		format = lit.Value
	}
	c.info.Formats[e] = []stdlib.Verb{{Conv: 'T', Flags: format}}
}
