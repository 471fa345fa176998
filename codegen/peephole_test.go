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

// TestPeepholeForwardsStores checks that a load of the slot just stored
// becomes a move from the stored register, or nothing when that register is
// the destination, and that a labelled load (another path reaches it) stays.
func TestPeepholeForwardsStores(t *testing.T) {
	in := asm.Instructions{
		asm.StoreMem(asm.RFP, -16, asm.R0, asm.DWord),
		asm.LoadMem(asm.R3, asm.RFP, -16, asm.DWord),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, -8, asm.DWord),
		asm.StoreMem(asm.RFP, -8, asm.R2, asm.DWord),
		asm.LoadMem(asm.R4, asm.RFP, -8, asm.DWord).WithSymbol("l"),
		asm.StoreMem(asm.RFP, -8, asm.R2, asm.Word),
		asm.LoadMem(asm.R4, asm.RFP, -8, asm.Word),
		asm.Return(),
	}
	out := peephole(in)
	want := asm.Instructions{in[0], asm.Mov.Reg(asm.R3, asm.R0), in[2], in[4], in[5], in[6], in[7], in[8]}
	if len(out) != len(want) {
		t.Fatalf("got %d instructions, want %d:\n%v", len(out), len(want), out)
	}
	for i := range want {
		if out[i].OpCode != want[i].OpCode || out[i].Dst != want[i].Dst || out[i].Src != want[i].Src || out[i].Offset != want[i].Offset {
			t.Errorf("instruction %d is %v, want %v", i, out[i], want[i])
		}
	}
}

// TestDropCtxCopy checks that `mov r9, r1` goes where R9 is only read
// before R1 changes (those reads take R1), and stays where R9 is read after
// a helper call or a jump goes backward.
func TestDropCtxCopy(t *testing.T) {
	lookup := asm.FnMapLookupElem.Call()
	early := asm.Instructions{
		asm.Mov.Reg(asm.R9, asm.R1),
		asm.LoadMem(asm.R0, asm.R9, 16, asm.Word),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.StoreMem(asm.RFP, -8, asm.R0, asm.DWord),
		lookup,
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	}
	out := dropCtxCopy(early)
	if len(out) != len(early)-1 || out[0].Src != asm.R1 || out[0].Offset != 16 {
		t.Errorf("R9 read before the call only: got\n%v", out)
	}
	// The instruction that changes R1 may read R9 first: it reads R1.
	args := asm.Instructions{
		asm.Mov.Reg(asm.R9, asm.R1),
		asm.LoadMem(asm.R0, asm.R9, 16, asm.Word),
		asm.JNE.Imm(asm.R0, 3, "out"),
		asm.Mov.Reg(asm.R1, asm.R9),
		lookup,
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	}
	if out := dropCtxCopy(args); len(out) != len(args)-1 || out[2].Src != asm.R1 || out[2].Dst != asm.R1 {
		t.Errorf("mov r1, r9 as the first change of R1: got\n%v", out)
	}
	late := append(asm.Instructions{}, early[:5]...)
	late = append(late, asm.LoadMem(asm.R0, asm.R9, 8, asm.DWord), asm.Return())
	if out := dropCtxCopy(late); len(out) != len(late) || out[0].Dst != asm.R9 {
		t.Errorf("R9 read after the call: the copy must stay, got\n%v", out)
	}
	back := asm.Instructions{
		asm.Mov.Reg(asm.R9, asm.R1),
		asm.LoadMem(asm.R0, asm.R9, 0, asm.DWord).WithSymbol("top"),
		asm.JEq.Imm(asm.R0, 0, "top"),
		asm.Return(),
	}
	if out := dropCtxCopy(back); len(out) != len(back) {
		t.Errorf("a backward jump: the copy must stay, got\n%v", out)
	}
}

// TestKeeps checks when a pop may take a pushed value from the register it
// was moved from: only over straight code that leaves that register and
// the stack register alone.
func TestKeeps(t *testing.T) {
	push := asm.Mov.Reg(asm.R6, asm.R0)
	cases := []struct {
		name string
		tail asm.Instructions
		want bool
	}{
		{"stores", asm.Instructions{storeImm64(-8, 0), asm.StoreMem(asm.RFP, -16, asm.R0, asm.DWord)}, true},
		{"other registers", asm.Instructions{asm.Mov.Imm(asm.R1, 3), asm.LoadMem(asm.R2, asm.RFP, -8, asm.DWord)}, true},
		{"a write of the source", asm.Instructions{asm.Mov.Imm(asm.R0, 3)}, false},
		{"a load into the source", asm.Instructions{asm.LoadMem(asm.R0, asm.RFP, -8, asm.DWord)}, false},
		{"a call", asm.Instructions{asm.FnGetSmpProcessorId.Call()}, false},
		{"a label", asm.Instructions{asm.Mov.Imm(asm.R1, 3).WithSymbol("l")}, false},
		{"a use of the stack register", asm.Instructions{asm.Add.Imm(asm.R6, 1)}, false},
		{"an atomic", asm.Instructions{asm.AddAtomic.Mem(asm.R1, asm.R2, asm.DWord, 0)}, false},
	}
	for _, c := range cases {
		if got := keeps(append(asm.Instructions{push}, c.tail...), asm.R0, asm.R6); got != c.want {
			t.Errorf("%s: keeps %v, want %v", c.name, got, c.want)
		}
	}
	if keeps(asm.Instructions{push.WithSymbol("l")}, asm.R0, asm.R6) {
		t.Error("a labelled push: another path may arrive without the move")
	}
}
