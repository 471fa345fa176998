// Package codegen turns a checked script into eBPF instructions with
// cilium/ebpf/asm: one program per probe spec, those on one attach point
// then merged into one (merge.go), and the maps they share.
package codegen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// frameSize is the eBPF stack limit.
const frameSize = 512

// frame hands out 8-byte aligned slots of the 512-byte eBPF stack; offsets
// are negative, from R10. A statement's temporary slots (keys, values,
// records) are handed out again to the next statement; slots that live
// across statements (variables, the parsed IP header, spill and scratch
// slots) are kept, above every slot used before them.
type frame struct {
	used int
	// high is the most ever used; floor what a release keeps: the kept
	// slots lie below it.
	high, floor int
}

// alloc reserves n bytes and returns the slot's offset from R10.
func (f *frame) alloc(n int) (int16, error) {
	n = (n + 7) &^ 7
	if f.used+n > frameSize {
		return 0, fmt.Errorf("the probe needs more than %d bytes of eBPF stack; split it into smaller probes", frameSize)
	}
	f.used += n
	f.high = max(f.high, f.used)
	return int16(-f.used), nil
}

// keep reserves n bytes that live across statements. They lie past every
// slot used so far, so no earlier statement's temporary wrote there: a
// variable's slot keeps the zero the program starts it with.
func (f *frame) keep(n int) (int16, error) {
	used := f.used
	f.used = f.high
	off, err := f.alloc(n)
	if err != nil {
		f.used = used
		return 0, err
	}
	f.floor = f.used
	return off, nil
}

// mark is where a statement starts; release hands the slots after it out
// again, except those kept.
func (f *frame) mark() int     { return f.used }
func (f *frame) release(m int) { f.used = max(m, f.floor) }

// zero8 zeroes the 8 bytes at off from R10 (asm.StoreImm has no DWord form).
func zero8(off int16) []asm.Instruction {
	return []asm.Instruction{storeImm64(off, 0)}
}

// storeImm64 is `*(u64 *)(R10 + at) = n` (n sign-extended), which the
// kernel has but asm.StoreImm does not build.
func storeImm64(at int16, n int32) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(asm.DWord), Dst: asm.RFP, Offset: at, Constant: int64(n)}
}
