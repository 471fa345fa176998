// Package codegen turns a checked script into eBPF instructions with
// cilium/ebpf/asm: one program per probe spec, those on one attach point
// then merged into one (merge.go), and the maps they share.
package codegen

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// frameSize is the eBPF stack limit.
const frameSize = 512

// errStackFull marks a program whose slots do not fit the eBPF stack:
// compileProbe compiles it again with its large slots in the scratch
// area (scratch.go).
var errStackFull = errors.New("the eBPF stack is full")

// region is one run of slots: used is where the next temporary slot
// goes; high the most ever used; floor what a release keeps (the kept
// slots lie below it).
type region struct {
	used, high, floor int
}

// frame hands out 8-byte aligned slots of the 512-byte eBPF stack; offsets
// are negative, from R10. A statement's temporary slots (keys, values,
// records) are handed out again to the next statement; slots that live
// across statements (variables, the parsed IP header, spill and scratch
// slots) are kept, above every slot used before them.
//
// Where onStack is set (scratch mode), a slot of more than onStack bytes
// goes to the per-CPU scratch area instead, by the same rules: its offset
// is below -frameSize (scratchOff), and the program's last pass turns
// R10-relative accesses at such offsets into accesses through R8, which
// holds the area's address (scratch.go).
type frame struct {
	region
	onStack int
	sc      region
}

// alloc reserves n bytes and returns the slot's offset from R10.
func (f *frame) alloc(n int) (int16, error) {
	n = (n + 7) &^ 7
	if f.offStack(n) {
		return f.scratchAlloc(n)
	}
	if f.used+n > frameSize {
		return 0, stackFullError(fmt.Sprintf("the probe needs more than %d bytes of eBPF stack; split it into smaller probes", frameSize))
	}
	f.used += n
	f.high = max(f.high, f.used)
	return int16(-f.used), nil
}

// offStack reports whether a slot of n bytes goes to the scratch area.
func (f *frame) offStack(n int) bool { return f.onStack > 0 && n > f.onStack }

// scratchAlloc reserves n bytes of the scratch area: its slots grow
// upwards from scratchOff(0).
func (f *frame) scratchAlloc(n int) (int16, error) {
	if f.sc.used+n > scratchSize {
		return 0, fmt.Errorf("the probe needs more than %d bytes of scratch memory for its strings and records; split it into smaller probes, or lower max_strlen", scratchSize)
	}
	at := f.sc.used
	f.sc.used += n
	f.sc.high = max(f.sc.high, f.sc.used)
	return scratchOff(at), nil
}

// keep reserves n bytes that live across statements. They lie past every
// slot used so far, so no earlier statement's temporary wrote there: a
// variable's slot keeps the zero the program starts it with.
func (f *frame) keep(n int) (int16, error) {
	r := &f.region
	if f.offStack((n + 7) &^ 7) {
		r = &f.sc
	}
	used := r.used
	r.used = r.high
	off, err := f.alloc(n)
	if err != nil {
		r.used = used
		return 0, err
	}
	r.floor = r.used
	return off, nil
}

// frameMark is where a statement starts, in the stack and in the
// scratch area.
type frameMark struct{ stack, scratch int }

// mark is where a statement starts; release hands the slots after it out
// again, except those kept.
func (f *frame) mark() frameMark { return frameMark{f.used, f.sc.used} }
func (f *frame) release(m frameMark) {
	f.used = max(m.stack, f.floor)
	f.sc.used = max(m.scratch, f.sc.floor)
}

// zero8 zeroes the 8 bytes at off from R10 (asm.StoreImm has no DWord form).
func zero8(off int16) []asm.Instruction {
	return []asm.Instruction{storeImm64(off, 0)}
}

// storeImm64 is `*(u64 *)(R10 + at) = n` (n sign-extended), which the
// kernel has but asm.StoreImm does not build.
func storeImm64(at int16, n int32) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(asm.DWord), Dst: asm.RFP, Offset: at, Constant: int64(n)}
}

// stackFullError is a program whose slots do not fit the stack.
type stackFullError string

func (e stackFullError) Error() string        { return string(e) }
func (e stackFullError) Is(target error) bool { return target == errStackFull }

// stackSpanError is a positioned error of a program whose stack is full.
type stackSpanError struct{ *spanError }

func (e stackSpanError) Unwrap() []error { return []error{e.spanError, errStackFull} }
