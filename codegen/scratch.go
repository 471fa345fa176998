package codegen

import (
	"github.com/cilium/ebpf/asm"
)

// The scratch area: strings and records too large for the 512-byte eBPF
// stack, as bpftrace keeps them in its scratch buffers. A probe whose slots
// do not fit the stack is compiled again in scratch mode (compileProbe):
// each slot of more than onStack bytes (bpftrace's on_stack_limit, 32 by
// default) goes to one per-CPU array value, ScratchMap, whose address the
// program looks up once at its start (and each loop body at its own) into
// R8, which the value stack then leaves alone (vstack.regs). Slots are
// handed out as on the stack, at offsets below -frameSize (scratchOff);
// the last pass (toScratch) rewrites the accesses at such offsets from R10
// to R8. A probe whose slots fit the stack is compiled as before: no
// lookup, no R8, the same instructions.

// ScratchMap is the per-CPU array whose one value is the scratch area.
const ScratchMap = "scratch"

// scratchReg holds the scratch area's address in scratch mode.
const scratchReg = asm.R8

// scratchBias maps scratch positions to R10 offsets: the area's byte p is
// at offset p - scratchBias, below every stack offset.
const scratchBias = 1 << 15

// scratchSize is how much of the area one program uses at most: its
// offsets stay below -frameSize, and the kernel's per-CPU values are at
// most 32 KiB.
const scratchSize = scratchBias - frameSize - 8

// defaultOnStack is bpftrace's on_stack_limit: the slots larger than it go
// to the scratch area in scratch mode.
const defaultOnStack = 32

// scratchOff is the R10 offset standing for the area's byte at.
func scratchOff(at int) int16 { return int16(at - scratchBias) }

// isScratch reports whether an R10 offset stands for the scratch area.
func isScratch(off int64) bool { return off < -frameSize && off >= -scratchBias }

// scratchPos is the position in the area an R10 offset stands for.
func scratchPos(off int64) int64 { return off + scratchBias }

// scratchPrologue looks up the scratch area into R8; the program returns
// 0 where the lookup fails (it does not: the array has its one value on
// every CPU). It clobbers R0-R5.
func (g *gen) scratchPrologue() error {
	g.maps.scratchMap(8)
	m := g.frame.mark()
	defer g.frame.release(m)
	key, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	ok := g.label("scratch")
	g.emit(
		asm.StoreImm(asm.RFP, key, 0, asm.Word),
		asm.LoadMapPtr(asm.R1, 0).WithReference(ScratchMap),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.FnMapLookupElem.Call(),
		asm.JNE.Imm(asm.R0, 0, ok),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
		asm.Mov.Reg(scratchReg, asm.R0).WithSymbol(ok),
	)
	// Variables are zeroed from here on, where they may be in the area.
	g.varsAt = len(g.insns)
	return nil
}

// scratchMode reports whether g compiles in scratch mode.
func (g *gen) scratchMode() bool { return g.frame.onStack > 0 }

// toScratch rewrites a function's accesses to the scratch area, written
// as R10 offsets below -frameSize, as accesses through R8: loads, stores,
// and the address `rX = R10; rX += off` that helpers take.
func toScratch(insns asm.Instructions) asm.Instructions {
	for i := range insns {
		ins := &insns[i]
		switch cls := ins.OpCode.Class(); {
		case cls == asm.LdXClass && ins.Src == asm.RFP && isScratch(int64(ins.Offset)):
			ins.Src, ins.Offset = scratchReg, int16(scratchPos(int64(ins.Offset)))
		case (cls == asm.StXClass || cls == asm.StClass) && ins.Dst == asm.RFP && isScratch(int64(ins.Offset)):
			ins.Dst, ins.Offset = scratchReg, int16(scratchPos(int64(ins.Offset)))
		case isRegMove(*ins) && ins.Src == asm.RFP && i+1 < len(insns):
			add := &insns[i+1]
			if add.OpCode == asm.Add.Imm(asm.R0, 0).OpCode && add.Dst == ins.Dst && add.Symbol() == "" && isScratch(add.Constant) {
				ins.Src, add.Constant = scratchReg, scratchPos(add.Constant)
			}
		}
	}
	return insns
}

// scratchFrom puts a loop body's function in scratch mode where its
// caller is: the caller's scratch slots stay live while it runs, so its
// own start past them.
func (cb *gen) scratchFrom(caller *gen) {
	if !caller.scratchMode() {
		return
	}
	cb.frame.onStack = caller.frame.onStack
	cb.frame.sc = region{used: caller.frame.sc.high, high: caller.frame.sc.high, floor: caller.frame.sc.high}
	cb.vs.regs = scratchVregs
}

// scratchStart looks the scratch area up into the loop body's own R8, in
// scratch mode; R2 and R3 (a map loop's key and value) are kept across
// the lookup where keepArgs says so.
func (cb *gen) scratchStart(keepArgs bool) error {
	if !cb.scratchMode() {
		return nil
	}
	if !keepArgs {
		return cb.scratchPrologue()
	}
	k2, err := cb.frame.keep(8)
	if err != nil {
		return err
	}
	k3, err := cb.frame.keep(8)
	if err != nil {
		return err
	}
	cb.emit(asm.StoreMem(asm.RFP, k2, asm.R2, asm.DWord), asm.StoreMem(asm.RFP, k3, asm.R3, asm.DWord))
	if err := cb.scratchPrologue(); err != nil {
		return err
	}
	cb.emit(asm.LoadMem(asm.R2, asm.RFP, k2, asm.DWord), asm.LoadMem(asm.R3, asm.RFP, k3, asm.DWord))
	return nil
}

// scratchBack takes a loop body's scratch slots into its caller's: what
// the caller keeps after the loop goes past them.
func (g *gen) scratchBack(cb *gen) {
	g.frame.sc.high = max(g.frame.sc.high, cb.frame.sc.high)
}

// endScratch closes a function in scratch mode: the area holds its
// slots, and its accesses go through R8.
func (g *gen) endScratch(insns asm.Instructions) asm.Instructions {
	if !g.scratchMode() {
		return insns
	}
	g.maps.scratchMap(g.frame.sc.high)
	return toScratch(insns)
}
