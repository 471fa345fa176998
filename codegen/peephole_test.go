package codegen

import (
	"encoding/binary"
	"testing"

	"github.com/cilium/ebpf/asm"
)

// TestPeepholeMovesLabelsAndDropsMoveBacks checks the peephole on a known
// sequence: two markers collapse onto the next instruction, jumps to either
// land there, and a move straight back is dropped.
func TestPeepholeMovesLabelsAndDropsMoveBacks(t *testing.T) {
	in := asm.Instructions{
		asm.JEq.Imm(asm.R1, 0, "a"),
		asm.JEq.Imm(asm.R1, 1, "b"),
		asm.Mov.Reg(asm.R6, asm.R0),
		asm.Mov.Reg(asm.R0, asm.R6),
		asm.Mov.Reg(asm.R0, asm.R0).WithSymbol("a"),
		asm.Mov.Reg(asm.R0, asm.R0).WithSymbol("b"),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	}
	out := peephole(in)
	if len(out) != 5 {
		t.Fatalf("got %d instructions, want 5:\n%v", len(out), out)
	}
	if out[0].Reference() != "a" || out[1].Reference() != "a" {
		t.Errorf("jumps go to %q and %q, want both to a", out[0].Reference(), out[1].Reference())
	}
	if out[3].Symbol() != "a" || out[3].Constant != 0 || out[3].OpCode != asm.Mov.Imm(asm.R0, 0).OpCode {
		t.Errorf("label a is on %v, want on mov r0, 0", out[3])
	}
	if err := out.Marshal(discardW{}, binary.LittleEndian); err != nil {
		t.Errorf("result does not encode: %v", err)
	}
}

type discardW struct{}

func (discardW) Write(p []byte) (int, error) { return len(p), nil }
