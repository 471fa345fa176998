package codegen

import (
	"fmt"
	"math"

	"github.com/cilium/ebpf/asm"
)

// errTooLarge is a program whose jumps cannot be encoded: an eBPF jump
// spans at most 32,767 instructions, and a long predicate (a chain of
// 1,000 || terms) jumps from its first test to the end of the probe.
type errTooLarge struct{}

func (errTooLarge) Error() string {
	return fmt.Sprintf("program too large: its jumps span more than the %d instructions an eBPF jump can", math.MaxInt16)
}

// checkJumps reports a jump whose offset does not fit its 16 bits.
func checkJumps(insns asm.Instructions) error {
	at := map[string]int{}
	pc := 0
	for _, ins := range insns {
		if sym := ins.Symbol(); sym != "" {
			at[sym] = pc
		}
		pc += int(ins.Size() / asm.InstructionSize)
	}
	pc = 0
	for _, ins := range insns {
		op := ins.OpCode.JumpOp()
		if op != asm.InvalidJumpOp && op != asm.Call && op != asm.Exit {
			if t, ok := at[ins.Reference()]; ok {
				if d := t - pc - 1; d > math.MaxInt16 || d < math.MinInt16 {
					return errTooLarge{}
				}
			}
		}
		pc += int(ins.Size() / asm.InstructionSize)
	}
	return nil
}
