package check

import (
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang/types"
)

// fromBTF converts a BTF type to a script type. It reports false for types a
// script cannot hold (functions, floats).
func (c *checker) fromBTF(t btf.Type) (types.Type, bool) {
	switch u := btf.UnderlyingType(t).(type) {
	case *btf.Int:
		r := types.Type{Kind: types.Int, Size: int(u.Size), Signed: u.Encoding&btf.Signed != 0}
		if u.Encoding&btf.Bool != 0 {
			r.Fmt = types.FmtBool
		}
		if r.Size > 8 {
			return types.Bad, false
		}
		return r, true
	case *btf.Enum:
		return types.Type{Kind: types.Int, Size: int(u.Size), Signed: u.Signed, Fmt: types.FmtEnum, BTF: u}, true
	case *btf.Pointer:
		return types.Type{Kind: types.Ptr, Size: 8, BTF: u.Target}, true
	case *btf.Struct, *btf.Union:
		size, _ := btf.Sizeof(u)
		return types.Type{Kind: types.Struct, Size: size, BTF: u}, true
	case *btf.Array:
		if e, ok := btf.UnderlyingType(u.Type).(*btf.Int); ok && e.Size == 1 && u.Nelems > 0 {
			return types.Str(int(u.Nelems)), true
		}
		size, _ := btf.Sizeof(u)
		return types.Type{Kind: types.Array, Size: size, BTF: u}, true
	case *btf.Void:
		return types.Type{Kind: types.Void}, false
	}
	return types.Bad, false
}

// FindMember looks a member up by name in a struct or union, descending into
// anonymous members; the offset is in bits from the start of t.
func FindMember(t btf.Type, name string) (btf.Member, uint32, bool) {
	members := types.Members(t)
	for _, m := range members {
		if m.Name == name {
			return m, uint32(m.Offset), true
		}
	}
	for _, m := range members {
		if m.Name == "" {
			if inner, off, ok := FindMember(m.Type, name); ok {
				return inner, uint32(m.Offset) + off, true
			}
		}
	}
	return btf.Member{}, 0, false
}

// memberNames lists a struct's member names, anonymous members flattened, for hints.
func memberNames(t btf.Type) []string {
	var out []string
	for _, m := range types.Members(t) {
		if m.Name == "" {
			out = append(out, memberNames(m.Type)...)
		} else {
			out = append(out, m.Name)
		}
	}
	return out
}

// resolveMember resolves one `.name` or `->name` on a struct type.
func (c *checker) resolveMember(structType btf.Type, name string, deref bool) (Member, bool) {
	m, off, ok := FindMember(structType, name)
	if !ok {
		return Member{}, false
	}
	t, _ := c.fromBTF(m.Type)
	return Member{Name: name, Offset: off, BitfieldSize: uint32(m.BitfieldSize), Deref: deref, Type: t, BTF: m.Type}, true
}
