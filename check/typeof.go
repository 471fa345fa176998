package check

import (
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// typeOf checks bpftrace's sizeof(TYPE), sizeof(x), offsetof(TYPE, a.b) and
// offsetof(x, a.b): constants from the kernel's BTF, in bytes. The operand
// of sizeof(x) is typed, never evaluated.
func (c *checker) typeOf(e *lang.TypeOfExpr) types.Type {
	size, base, ok := c.typeOfOperand(e)
	if !ok {
		return types.Bad
	}
	if e.Op == "sizeof" {
		c.info.Consts[e] = Const{Int: size}
		return types.U64
	}
	off, ok := c.memberOffset(e, base)
	if !ok {
		return types.Bad
	}
	c.info.Consts[e] = Const{Int: off}
	return types.U64
}

// typeOfOperand is the size of the type or expression sizeof and offsetof
// name, and the BTF type offsetof walks (nil where there is none).
func (c *checker) typeOfOperand(e *lang.TypeOfExpr) (uint64, btf.Type, bool) {
	if id, ok := e.X.(*lang.Ident); ok {
		if n, ok := c.typeNameSize(id.Name); ok {
			// sizeof(uint64_t), sizeof(u32): a type's name, not a value.
			c.info.Consts[id] = Const{Int: n}
			return n, nil, true
		}
	}
	if e.X != nil {
		t := c.typeOfExpr(e.X)
		switch {
		case t.Kind == types.Invalid:
			return 0, nil, false
		case t.Kind == types.Struct && t.BTF != nil:
			n, err := btf.Sizeof(t.BTF)
			if err != nil {
				c.errorf(e.X, "", "the size of %s is not known: %v", types.CName(t.BTF), err)
				return 0, nil, false
			}
			return uint64(n), t.BTF, true
		case t.Kind == types.Ptr:
			return 8, t.BTF, true
		case t.Kind == types.Tuple:
			size, _ := tupleLayout(t)
			return size, nil, true
		}
		return uint64(t.Size), nil, true
	}
	at := lang.Node(nameNode{e.TypeSpan})
	if t, ok := castInts[e.Type]; ok {
		if e.Ptr > 0 {
			return 8, nil, true
		}
		return uint64(t.Size), nil, true
	}
	target, ok := c.taggedType(at, e.Type)
	if !ok {
		return 0, nil, false
	}
	if e.Ptr > 0 {
		return 8, nil, true
	}
	n, err := btf.Sizeof(target)
	if err != nil {
		c.errorf(at, "", "the size of %s is not known: %v", e.Type, err)
		return 0, nil, false
	}
	return uint64(n), target, true
}

// memberOffset is the byte offset of offsetof's member path in base: struct
// and union members, through nested ones (a.b), never through a pointer.
// An expression's pointer is walked from the struct it points to, as
// offsetof(skb, len) in bpftrace.
func (c *checker) memberOffset(e *lang.TypeOfExpr, base btf.Type) (uint64, bool) {
	what := e.Type + strings.Repeat(" *", e.Ptr)
	if e.X != nil {
		what = c.text(e.X)
	}
	cur := base
	var bits uint64
	for i, name := range e.Fields {
		switch btf.UnderlyingType(cur).(type) {
		case *btf.Struct, *btf.Union:
		default:
			path := strings.Join(e.Fields[:i], ".")
			if path == "" {
				path = what
			}
			hint := ""
			if i == 0 && e.Ptr > 0 {
				hint = "offsetof takes the struct itself: offsetof(" + e.Type + ", " + strings.Join(e.Fields, ".") + ")"
			}
			if p, ok := btf.UnderlyingType(cur).(*btf.Pointer); ok && i > 0 {
				c.errorf(e, "offsetof("+types.CName(btf.UnderlyingType(p.Target))+", "+strings.Join(e.Fields[i:], ".")+") is the offset behind it",
					"offsetof: %s is a pointer; offsetof adds the offsets of members within one struct", path)
				return 0, false
			}
			c.errorf(e, hint, "offsetof: %s is not a struct or union, so it has no member %s", path, name)
			return 0, false
		}
		m, ok := c.resolveMember(cur, name, false)
		if !ok {
			c.errorf(e, didYouMean(name, memberNames(cur)), "unknown field %q of %s", name, types.CName(btf.UnderlyingType(cur)))
			return 0, false
		}
		if m.BitfieldSize != 0 {
			c.errorf(e, "", "offsetof: %s is a bitfield, which has no byte offset", name)
			return 0, false
		}
		bits += uint64(m.Offset)
		cur = m.BTF
	}
	return bits / 8, true
}

// typeOfExpr types sizeof's operand: `*p` there is the struct p points to
// (sizeof(*skb)), which an expression elsewhere cannot be.
func (c *checker) typeOfExpr(x lang.Expr) types.Type {
	u, ok := lang.Unparen(x).(*lang.UnaryExpr)
	if !ok || u.Op != "*" {
		return c.expr(x)
	}
	p := c.expr(u.X)
	if p.Kind != types.Ptr {
		return c.expr(x)
	}
	t, ok := c.fromBTF(p.BTF)
	if !ok {
		switch btf.UnderlyingType(p.BTF).(type) {
		case *btf.Struct, *btf.Union:
			t = types.Type{Kind: types.Struct, BTF: p.BTF}
		default:
			c.errorf(x, "", "the size of %s is not known", types.CName(p.BTF))
			return types.Bad
		}
	}
	if t.Kind == types.Struct {
		t.BTF = p.BTF
	}
	c.info.Types[u] = t
	if x != lang.Expr(u) {
		c.info.Types[x] = t
	}
	return t
}

// tupleLayout is a tuple's size and alignment as bpftrace lays it out: a
// C struct of its elements, each at its alignment (an integer its size,
// a string 1), the size rounded up to the largest.
func tupleLayout(t types.Type) (size, align uint64) {
	switch t.Kind {
	case types.Tuple:
		align = 1
		for _, el := range t.Tuple.Elems {
			s, a := tupleLayout(el)
			size = (size + a - 1) / a * a
			size += s
			align = max(align, a)
		}
		return (size + align - 1) / align * align, align
	case types.Int, types.Ptr:
		n := uint64(max(t.Size, 1))
		return n, n
	}
	return uint64(t.Size), 1
}

// typeNameSize is the size of a type sizeof names bare, as bpftrace takes
// it: bpftrace's integer names (uint64), the C99 ones (uint64_t) and the
// kernel's integer typedefs (u32, pid_t). A builtin or an enumerator of
// that name is a value, not a type.
func (c *checker) typeNameSize(name string) (uint64, bool) {
	if t, ok := castInts[strings.TrimSuffix(name, "_t")]; ok && name != "int" {
		return uint64(t.Size), true
	}
	if stdlib.LookupField(name) != nil || stdlib.LookupConst(name) != nil {
		return 0, false
	}
	if _, ok := c.defined.enumerators[name]; ok {
		return 0, false
	}
	if c.opts.BTF == nil {
		return 0, false
	}
	for _, t := range anyNamed(c.opts.BTF, name) {
		switch t.(type) {
		case *btf.Typedef, *btf.Int:
			if n, err := btf.Sizeof(t); err == nil {
				return uint64(n), true
			}
		}
	}
	return 0, false
}
