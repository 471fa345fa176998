package codegen

import "github.com/cilium/ebpf/asm"

// forwardCopies removes a copy whose source dies: in `rX = v; rY = rX;
// ...; rX = w` (w not reading rX, nothing between reading it), the first
// writes rY instead and the copy goes. The copy and what follows it up to
// w carry no label and do not jump, so no other path sees rX's old value.
func forwardCopies(insns asm.Instructions) asm.Instructions {
	out := make(asm.Instructions, 0, len(insns))
	for i := 0; i < len(insns); i++ {
		a := insns[i]
		if i+2 < len(insns) {
			b, c := insns[i+1], insns[i+2]
			if isRegMove(b) && b.Symbol() == "" && c.Symbol() == "" && b.Src != b.Dst &&
				onlyWrites(a, b.Src) && diesIn(insns[i+2:], b.Src) {
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

// diesIn reports whether the straight line insns overwrites r before
// anything reads it: no label, jump or exit comes first.
func diesIn(insns asm.Instructions, r asm.Register) bool {
	for _, ins := range insns {
		switch {
		case ins.Symbol() != "":
			return false
		case kills(ins, r):
			return true
		case ins.OpCode.Class().IsJump(), touches(ins, r):
			// A jump, call or exit (which may read r), or an
			// instruction that reads or changes r.
			return false
		}
	}
	return false
}

// touches reports whether ins reads or writes r (a jump's registers aside).
func touches(ins asm.Instruction, r asm.Register) bool {
	switch cls := ins.OpCode.Class(); {
	case cls.IsALU():
		return ins.Dst == r || (ins.OpCode.Source() == asm.RegSource && ins.Src == r)
	case cls == asm.LdXClass, cls == asm.StXClass:
		return ins.Dst == r || ins.Src == r
	case cls == asm.StClass, cls == asm.LdClass:
		return ins.Dst == r
	}
	return true
}
