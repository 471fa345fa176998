// Package codegen turns a checked script into eBPF instructions with
// cilium/ebpf/asm: one program per probe spec, and the maps they share.
package codegen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// frameSize is the eBPF stack limit.
const frameSize = 512

// frame hands out 8-byte aligned slots of the 512-byte eBPF stack; offsets
// are negative, from R10.
type frame struct {
	used int
}

// alloc reserves n bytes and returns the slot's offset from R10.
func (f *frame) alloc(n int) (int16, error) {
	n = (n + 7) &^ 7
	if f.used+n > frameSize {
		return 0, fmt.Errorf("the probe needs more than %d bytes of eBPF stack; split it into smaller probes", frameSize)
	}
	f.used += n
	return int16(-f.used), nil
}

// zero8 zeroes the 8 bytes at off from R10 (asm.StoreImm has no DWord form).
func zero8(off int16) []asm.Instruction {
	return []asm.Instruction{
		asm.StoreImm(asm.RFP, off, 0, asm.Word),
		asm.StoreImm(asm.RFP, off+4, 0, asm.Word),
	}
}
