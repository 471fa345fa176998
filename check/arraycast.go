package check

import (
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// bpftrace's array casts (language.md, Array casts): an integer's bytes
// as an array of integers, `(int8[8])12345` (the size may be left out:
// `(uint8[])x`), and back, `(uint64)$a`. Both sides have one size; an
// integer is its 8 bytes, as a register holds it, unless the array
// names fewer.

// arrayCast types (TYPE[N])x.
func (c *checker) arrayCast(e *lang.CastExpr, x types.Type) types.Type {
	elem, ok := cBaseTypes[e.Type]
	if !ok || e.Ptr > 0 {
		c.errorf(e, "an array cast is to integers: (int8[8])x, (uint32[2])x", "cannot cast to an array of %s", e.Type)
		return types.Bad
	}
	size := int(elem.Size)
	var total int
	switch {
	case x.Kind == types.Invalid:
		return types.Bad
	case x.IsInt():
		total = 8
		if e.Len > 0 {
			total = e.Len * size
		}
		if total > 8 {
			c.errorf(e, "an integer is 8 bytes: cast it to at most 8 bytes of elements", "cannot cast an integer to %d bytes", total)
			return types.Bad
		}
	case x.Kind == types.Array:
		total = x.Size
		if e.Len > 0 && e.Len*size != total {
			c.errorf(e, "", "cannot cast %s (%d bytes) to %d bytes", x, total, e.Len*size)
			return types.Bad
		}
	default:
		c.errorf(e.X, "cast an integer or an array of integers", "cannot cast %s to an array", x)
		return types.Bad
	}
	if total%size != 0 {
		c.errorf(e, "", "%d bytes are not a whole number of %s", total, e.Type)
		return types.Bad
	}
	return types.Type{Kind: types.Array, Size: total, BTF: &btf.Array{Index: cBaseTypes["unsigned int"], Type: elem, Nelems: uint32(total / size)}}
}

// arrayToInt types (uint64)a of an array a of that size.
func (c *checker) arrayToInt(e *lang.CastExpr, x, t types.Type) types.Type {
	if x.Size != t.Size {
		c.errorf(e, "both sides of an array cast have one size", "cannot cast %s (%d bytes) to %s (%d bytes)", x, x.Size, e.Type, t.Size)
		return types.Bad
	}
	return t
}
