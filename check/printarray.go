package check

import (
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang/types"
)

// intArray reports whether t is an array of integers, which print shows
// as bpftrace does: [1,2,3,4].
func intArray(t types.Type) bool {
	a, ok := t.BTF.(*btf.Array)
	if !ok {
		return false
	}
	_, isInt := btf.UnderlyingType(a.Type).(*btf.Int)
	return isInt
}
