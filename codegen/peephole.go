package codegen

import "github.com/cilium/ebpf/asm"

// isMarker reports whether ins is the no-op `mov r0, r0` that mark emits to
// carry a label.
func isMarker(ins asm.Instruction) bool {
	return ins.OpCode == asm.Mov.Reg(asm.R0, asm.R0).OpCode && ins.Dst == asm.R0 && ins.Src == asm.R0
}

// peephole removes what the generator's simple patterns leave behind: label
// markers (their label moves to the next real instruction) and the second
// of `mov a, b; mov b, a`, a value pushed to the register stack and popped
// straight back, and a load of the stack slot just stored (a move from the
// stored register instead). Jumps are retargeted; behaviour is unchanged.
// Last, threadJumps shortens the jumps around the labels and forwardCopies
// drops copies from registers about to be overwritten.
func peephole(insns asm.Instructions) asm.Instructions {
	alias := map[string]string{}
	var pending []string
	out := make(asm.Instructions, 0, len(insns))
	for _, ins := range insns {
		if isMarker(ins) {
			if sym := ins.Symbol(); sym != "" {
				pending = append(pending, sym)
				continue
			}
		}
		if len(pending) > 0 {
			target := ins.Symbol()
			if target == "" {
				target = pending[0]
				ins = ins.WithSymbol(target)
			}
			for _, p := range pending {
				if p != target {
					alias[p] = target
				}
			}
			pending = nil
		}
		if n := len(out); n > 0 && ins.Symbol() == "" && isMovBack(out[n-1], ins) {
			continue
		}
		if n := len(out); n > 0 && ins.Symbol() == "" && isReload(out[n-1], ins) {
			// The value is still in the register it was stored from.
			if ins.Dst == out[n-1].Src {
				continue
			}
			ins = asm.Mov.Reg(ins.Dst, out[n-1].Src)
		}
		out = append(out, ins)
	}
	for _, p := range pending {
		// Labels at the very end keep a marker to land on.
		out = append(out, asm.Mov.Reg(asm.R0, asm.R0).WithSymbol(p))
	}
	for i, ins := range out {
		if ref := ins.Reference(); ref != "" && ins.OpCode.Class().IsJump() {
			if to, ok := alias[ref]; ok {
				out[i] = ins.WithReference(to)
			}
		}
	}
	return forwardCopies(threadJumps(out))
}

// isMovBack reports whether b is `mov x, y` right after a's `mov y, x`.
func isMovBack(a, b asm.Instruction) bool {
	mov := asm.Mov.Reg(asm.R0, asm.R1).OpCode
	return a.OpCode == mov && b.OpCode == mov && a.Dst == b.Src && a.Src == b.Dst
}

// isReload reports whether b loads, at the same size, the stack slot that a
// has just stored a register into.
func isReload(a, b asm.Instruction) bool {
	return a.OpCode.Class() == asm.StXClass && a.OpCode.Mode() == asm.MemMode && a.Dst == asm.RFP &&
		b.OpCode.Class() == asm.LdXClass && b.OpCode.Mode() == asm.MemMode && b.Src == asm.RFP &&
		a.Offset == b.Offset && a.OpCode.Size() == asm.DWord && b.OpCode.Size() == asm.DWord
}

// dropCtxCopy removes the program's first instruction, `mov r9, r1` (the
// context kept for the whole program), where every use of R9 comes before
// the first instruction that changes R1 (a helper call, or a write): those
// read R1 instead. Positions decide it, so only for programs whose jumps all
// go forward.
func dropCtxCopy(insns asm.Instructions) asm.Instructions {
	if len(insns) == 0 || insns[0].Symbol() != "" || insns[0].OpCode != asm.Mov.Reg(asm.R9, asm.R1).OpCode ||
		insns[0].Dst != asm.R9 || insns[0].Src != asm.R1 {
		return insns
	}
	at := map[string]int{}
	for i, ins := range insns {
		if sym := ins.Symbol(); sym != "" {
			at[sym] = i
		}
	}
	k := len(insns)
	for i := 1; i < len(insns); i++ {
		ins := insns[i]
		cls := ins.OpCode.Class()
		if cls.IsJump() {
			op := ins.OpCode.JumpOp()
			if op != asm.Exit && op != asm.Call {
				if to, ok := at[ins.Reference()]; !ok || to <= i {
					return insns // a backward or unlabelled jump
				}
			}
		}
		uses9 := ins.Dst == asm.R9 || ins.Src == asm.R9
		if i >= k && uses9 {
			return insns
		}
		if i < k && ins.Dst == asm.R9 && !(cls == asm.StXClass || cls == asm.StClass) {
			return insns // R9 written: not the context any more
		}
		if k == len(insns) && (ins.IsBuiltinCall() || ins.IsFunctionCall() || ins.IsKfuncCall() || writesR1(ins)) {
			k = i
		}
	}
	out := make(asm.Instructions, 0, len(insns)-1)
	for i, ins := range insns[1:] {
		// The instruction that changes R1 reads R9 before (mov r1, r9).
		if i+1 <= k {
			if ins.Dst == asm.R9 {
				ins.Dst = asm.R1
			}
			if ins.Src == asm.R9 {
				ins.Src = asm.R1
			}
		}
		out = append(out, ins)
	}
	return out
}

// writesR1 reports whether ins writes R1: an ALU operation, a load or a
// 64-bit immediate into it.
func writesR1(ins asm.Instruction) bool {
	switch ins.OpCode.Class() {
	case asm.ALUClass, asm.ALU64Class, asm.LdXClass, asm.LdClass:
		return ins.Dst == asm.R1
	}
	return false
}
