package check

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// castInts are bpftrace's integer type names.
var castInts = map[string]types.Type{
	"uint8": types.U8, "uint16": types.U16, "uint32": types.U32, "uint64": types.U64,
	"int8":  {Kind: types.Int, Size: 1, Signed: true},
	"int16": {Kind: types.Int, Size: 2, Signed: true},
	"int32": types.S32, "int64": types.S64,
}

// cast checks `(struct NAME *)x` and `(uint32)x`. The operand is an integer
// or a pointer; a pointer cast only changes the type that member accesses
// resolve against (every read goes through bpf_probe_read_kernel), an
// integer cast truncates or sign-extends.
func (c *checker) cast(e *lang.CastExpr) types.Type {
	x := c.expr(e.X)
	if e.Type == "string" {
		return c.stringCast(e, x)
	}
	if e.Array {
		return c.arrayCast(e, x)
	}
	if e.Type == "bool" && e.Ptr == 0 {
		// bpftrace's (bool)x: an integer or pointer not 0, a string not "".
		if x.Kind != types.Invalid && !x.IsScalar() && !(x.Kind == types.String && x.Fmt != types.FmtBuf) {
			c.errorf(e.X, "", "cannot cast %s to bool", x)
			return types.Bad
		}
		return types.Bool
	}
	if x.Kind == types.Array && e.Ptr == 0 {
		if t, ok := castInts[e.Type]; ok {
			return c.arrayToInt(e, x, t)
		}
	}
	if x.Kind != types.Invalid && !x.IsScalar() {
		c.errorf(e.X, "", "only an integer or a pointer can be cast, got %s", x)
		return types.Bad
	}
	if en, ok := c.scriptEnum(e.Type); ok && e.Ptr == 0 {
		// (enum BAZ)333 prints FOO, where BAZ has it; a value it has no
		// name for prints as a number.
		return types.Type{Kind: types.Int, Size: 8, Signed: true, Fmt: types.FmtEnum, BTF: en}
	}
	t := c.namedType(e, e.Type, e.Ptr, "a cast to")
	if t.Kind == types.Ptr && x.User {
		// A pointer cast keeps the address space: (struct ts *)args.rqtp
		// still points into the traced process.
		t.User = x.User
	}
	return t
}

// namedType resolves a type a cast or a declaration names: an integer type
// or a pointer to a struct or union of the kernel's BTF. what says which
// (for "a cast to a struct sock value is not supported").
func (c *checker) namedType(at lang.Node, typ string, ptr int, what string) types.Type {
	if t, ok := castInts[typ]; ok {
		if ptr == 0 {
			return t
		}
		// A pointer to integers: *p reads one, p[i] the i-th.
		var target btf.Type = cBaseTypes[typ]
		for i := 1; i < ptr; i++ {
			target = &btf.Pointer{Target: target}
		}
		return types.Type{Kind: types.Ptr, Size: 8, BTF: target}
	}
	target, ok := c.taggedType(at, typ)
	if !ok {
		return types.Bad
	}
	if ptr == 0 {
		hint := "cast to a pointer: (" + typ + " *)"
		if what != "a cast to" {
			hint = "declare a pointer: " + typ + " *"
		}
		c.errorf(at, hint, "%s a %s value is not supported", what, typ)
		return types.Bad
	}
	for i := 1; i < ptr; i++ {
		target = &btf.Pointer{Target: target}
	}
	return types.Type{Kind: types.Ptr, Size: 8, BTF: target}
}

// taggedType finds the struct or union a type names ("struct sock", "union
// X") in the kernel's BTF, or says at at that it has none.
func (c *checker) taggedType(at lang.Node, typ string) (btf.Type, bool) {
	if t, ok := c.scriptTagged(typ); ok {
		return t, true
	}
	tag, name, _ := strings.Cut(typ, " ")
	var target btf.Type
	var err error
	if tag == "union" {
		var u *btf.Union
		err = c.opts.BTF.TypeByName(name, &u)
		target = u
	} else {
		var s *btf.Struct
		err = c.opts.BTF.TypeByName(name, &s)
		target = s
	}
	if err != nil {
		c.errorf(at, didYouMean(name, indexOf(c.opts.BTF).structNames()), "unknown %s %q in the kernel's BTF", tag, name)
		return nil, false
	}
	return target, true
}

// stringCast checks bpftrace's (string[N])s: a string as one of N bytes,
// its text the same (a longer buffer, as a map value or tuple wants).
func (c *checker) stringCast(e *lang.CastExpr, x types.Type) types.Type {
	switch {
	case x.Kind == types.Invalid:
		return types.Bad
	case !e.Array || e.Len <= 0 || e.Ptr > 0:
		c.errorf(e, `e.g. (string[64])"hi"`, "a cast to a string gives its size: (string[N])")
		return types.Bad
	case x.Kind != types.String || x.Fmt == types.FmtBuf:
		c.errorf(e.X, "", "only a string can be cast to string[%d], got %s", e.Len, x)
		return types.Bad
	case x.Size > e.Len:
		c.errorf(e, fmt.Sprintf("cast to string[%d] or more", x.Size), "cannot cast %s to the shorter string[%d]", x, e.Len)
		return types.Bad
	}
	return types.Str(e.Len)
}
