package codegen

import "github.com/cilium/ebpf/asm"

// forwardCopies removes a copy whose source dies at once: in `rX = v;
// rY = rX; rX = w` (w not reading rX), the first writes rY instead and
// the copy goes. Neither the copy nor the next carries a label, so no
// other path sees rX's old value.
func forwardCopies(insns asm.Instructions) asm.Instructions {
	out := make(asm.Instructions, 0, len(insns))
	for i := 0; i < len(insns); i++ {
		a := insns[i]
		if i+2 < len(insns) {
			b, c := insns[i+1], insns[i+2]
			if isRegMove(b) && b.Symbol() == "" && c.Symbol() == "" && b.Src != b.Dst &&
				onlyWrites(a, b.Src) && kills(c, b.Src) {
				a.Dst = b.Dst
				out = append(out, a)
				i++ // the copy
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// isRegMove reports whether ins is a 64-bit `mov dst, src`.
func isRegMove(ins asm.Instruction) bool {
	return ins.OpCode == asm.Mov.Reg(asm.R0, asm.R1).OpCode
}

// onlyWrites reports whether ins writes r from values other than r's own:
// a load into r, a move into r or a 64-bit immediate; its destination can
// change without changing what it computes.
func onlyWrites(ins asm.Instruction, r asm.Register) bool {
	if ins.Dst != r {
		return false
	}
	switch cls := ins.OpCode.Class(); {
	case cls == asm.LdXClass:
		return ins.OpCode.Mode() == asm.MemMode
	case cls == asm.LdClass:
		return ins.IsLoadFromMap() || ins.IsConstantLoad(asm.DWord)
	case cls.IsALU():
		return ins.OpCode.ALUOp() == asm.Mov && !(ins.OpCode.Source() == asm.RegSource && ins.Src == r)
	}
	return false
}

// kills reports whether ins overwrites r without reading it.
func kills(ins asm.Instruction, r asm.Register) bool {
	if ins.IsBuiltinCall() {
		// A helper reads R1-R5 and overwrites R0-R5.
		return r == asm.R0
	}
	if ins.OpCode.Class() == asm.LdXClass && ins.Src == r {
		return false
	}
	return onlyWrites(ins, r)
}
