package check

import (
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang/types"
)

// intArray reports whether t is an array bpftrace prints: of integers
// ([1,2,3,4]), of pointers ([0xffff...,0x0]) or of structs and unions of
// those ([{ .a = 1, .b = 0x0 },...]).
func intArray(t types.Type) bool {
	a, ok := t.BTF.(*btf.Array)
	return ok && printableBTF(a.Type, 0)
}

// printableBTF reports whether a value of BTF type t prints as bpftrace
// prints a struct's members: integers, enums, pointers, arrays and
// structs or unions of those (depth bounds a struct that holds itself
// through arrays).
func printableBTF(t btf.Type, depth int) bool {
	if depth > 8 {
		return false
	}
	switch u := btf.UnderlyingType(t).(type) {
	case *btf.Int, *btf.Enum, *btf.Pointer:
		return true
	case *btf.Array:
		return printableBTF(u.Type, depth+1)
	case *btf.Struct:
		return printableMembers(u.Members, depth)
	case *btf.Union:
		return printableMembers(u.Members, depth)
	}
	return false
}

func printableMembers(ms []btf.Member, depth int) bool {
	for _, m := range ms {
		if !printableBTF(m.Type, depth+1) {
			return false
		}
	}
	return len(ms) > 0
}
