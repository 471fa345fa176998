package check

import (
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// addrOf types bpftrace's &$x: a pointer to the variable's place on the
// BPF stack, of its type (an integer or a pointer), read back with *.
func (c *checker) addrOf(e *lang.UnaryExpr, x types.Type) types.Type {
	if _, ok := lang.Unparen(e.X).(*lang.VarExpr); !ok {
		c.errorf(e, "take the address of a scratch variable: $v = ...; &$v", "& needs a scratch variable")
		return types.Bad
	}
	var target btf.Type
	switch x.Kind {
	case types.Int:
		enc := btf.Unsigned
		if x.Signed {
			enc = btf.Signed
		}
		target = &btf.Int{Name: x.String(), Size: uint32(x.Size), Encoding: enc}
	case types.Ptr:
		target = &btf.Pointer{Target: x.BTF}
		if x.BTF == nil {
			target = &btf.Pointer{Target: &btf.Void{}}
		}
	default:
		c.errorf(e, "& takes the address of an integer or pointer variable", "cannot take the address of %s", x)
		return types.Bad
	}
	return types.Type{Kind: types.Ptr, Size: 8, BTF: target}
}
