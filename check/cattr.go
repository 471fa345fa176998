package check

import (
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
)

// The attributes after a script's struct or union (bpftrace 0.26, which
// hands the definition to clang): packed and aligned change its layout
// and are honoured; those that change no layout are accepted; any other
// is an error at it, rather than a layout that may differ from clang's.

// layoutAttrs is what a type's attributes ask of its layout.
type layoutAttrs struct {
	packed bool   // each member at the next byte (bit, for bitfields)
	align  uint32 // the type's alignment at least this; 0: its members'
}

// maxAlignment is what aligned without an argument aligns to: the
// largest alignment of the target, 16 on x86-64 and arm64.
const maxAlignment = 16

// layoutFree are attributes that change no layout.
var layoutFree = map[string]bool{
	"deprecated": true, "unused": true, "used": true, "may_alias": true, "preserve_access_index": true,
	"designated_init": true, "warn_unused_result": true, "visibility": true,
}

// typeAttrs reads a definition's attributes.
func (c *checker) typeAttrs(def *lang.CTypeDef) (layoutAttrs, bool) {
	var la layoutAttrs
	ok := true
	for _, a := range def.Attrs {
		name := a.Name
		if len(name) > 4 && name[:2] == "__" && name[len(name)-2:] == "__" {
			name = name[2 : len(name)-2] // __packed__ is packed
		}
		switch {
		case name == "packed" && !a.HasArg:
			la.packed = true
		case name == "aligned" && !a.HasArg:
			la.align = max(la.align, maxAlignment)
		case name == "aligned":
			if a.Arg == 0 || a.Arg&(a.Arg-1) != 0 || a.Arg > 1<<12 {
				c.errorf(nameNode{a.At}, "aligned's argument is a power of two: aligned(8)", "requested alignment %d is not a power of 2", a.Arg)
				ok = false
				continue
			}
			la.align = max(la.align, uint32(a.Arg))
		case layoutFree[name]:
		default:
			c.errorf(nameNode{a.At}, "skbtrace lays a type out by packed and aligned(N) and accepts attributes that change no layout (deprecated, unused...)",
				"attribute %s is not supported on %s %s", a.Name, def.Kind, def.Name)
			ok = false
		}
	}
	return la, ok
}

// alignOf is a type's alignment: the one its attributes set, where the
// script defines it with packed or aligned, else C's.
func (c *checker) alignOf(t btf.Type) uint32 {
	if a, ok := c.defined.align[t]; ok {
		return a
	}
	if arr, ok := btf.UnderlyingType(t).(*btf.Array); ok {
		return c.alignOf(arr.Type)
	}
	return alignOf(t)
}
