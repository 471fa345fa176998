package codegen

import "github.com/cilium/ebpf/asm"

// invertedJump is the condition that holds exactly where op's does not.
// JSet has none.
var invertedJump = map[asm.JumpOp]asm.JumpOp{
	asm.JEq: asm.JNE, asm.JNE: asm.JEq,
	asm.JGT: asm.JLE, asm.JLE: asm.JGT, asm.JGE: asm.JLT, asm.JLT: asm.JGE,
	asm.JSGT: asm.JSLE, asm.JSLE: asm.JSGT, asm.JSGE: asm.JSLT, asm.JSLT: asm.JSGE,
}

// isGoto reports whether ins is an unconditional jump to a label.
func isGoto(ins asm.Instruction) bool {
	return ins.OpCode.Class() == asm.JumpClass && ins.OpCode.JumpOp() == asm.Ja && ins.Reference() != ""
}

// threadJumps removes what structured code leaves around its labels: a
// goto the next instruction (an if without else, a branch ending where the
// other starts), and a conditional jump over a goto, `if c goto L; goto M;
// L:`, which becomes `if !c goto M; L:`. A goto that carries a label stays
// (other jumps land on it). Both rewrites repeat until neither applies.
func threadJumps(insns asm.Instructions) asm.Instructions {
	for changed := true; changed; {
		changed = false
		out := make(asm.Instructions, 0, len(insns))
		for i := 0; i < len(insns); i++ {
			ins := insns[i]
			if isGoto(ins) && ins.Symbol() == "" && i+1 < len(insns) && insns[i+1].Symbol() == ins.Reference() {
				changed = true
				continue
			}
			if i+2 < len(insns) && isGoto(insns[i+1]) && insns[i+1].Symbol() == "" && insns[i+2].Symbol() == ins.Reference() {
				if inv, ok := invertedJump[ins.OpCode.JumpOp()]; ok && ins.OpCode.Class().IsJump() && ins.Reference() != "" {
					ins.OpCode = ins.OpCode.SetJumpOp(inv)
					out = append(out, ins.WithReference(insns[i+1].Reference()))
					i++
					changed = true
					continue
				}
			}
			out = append(out, ins)
		}
		insns = out
	}
	return insns
}
