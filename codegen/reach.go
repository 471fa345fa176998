package codegen

import "github.com/cilium/ebpf/asm"

// dropUnreachable removes the instructions no path from a function's first
// reaches, which the verifier refuses: what follows a break or continue
// in a block, a loop body's break path where nothing breaks. A label on a
// removed instruction goes with it: every jump to it was unreachable too.
func dropUnreachable(insns asm.Instructions) asm.Instructions {
	at := map[string]int{}
	for i, ins := range insns {
		if sym := ins.Symbol(); sym != "" {
			at[sym] = i
		}
	}
	reach := make([]bool, len(insns))
	todo := []int{0}
	for len(todo) > 0 {
		i := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for i < len(insns) && !reach[i] {
			reach[i] = true
			ins := insns[i]
			if !ins.OpCode.Class().IsJump() || ins.OpCode.JumpOp() == asm.Call {
				i++
				continue
			}
			if ins.OpCode.JumpOp() == asm.Exit {
				break
			}
			if to, ok := at[ins.Reference()]; ok {
				todo = append(todo, to)
			}
			if ins.OpCode.JumpOp() == asm.Ja {
				break
			}
			i++
		}
	}
	n := 0
	for _, r := range reach {
		if r {
			n++
		}
	}
	if n == len(insns) {
		return insns
	}
	out := make(asm.Instructions, 0, n)
	for i, ins := range insns {
		if reach[i] {
			out = append(out, ins)
		}
	}
	return out
}
