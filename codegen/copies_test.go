package codegen

import (
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// copyProgs are programs returning their first argument plus 7, each
// with a copy from a register that dies right after (by a move into it, a
// load into it, a helper call), and the instructions forwardCopies leaves.
var copyProgs = []struct {
	name string
	in   asm.Instructions
	want int // instructions after
}{
	{"killed by a move", asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 0, asm.DWord),
		asm.Mov.Reg(asm.R3, asm.R2),
		asm.Mov.Imm(asm.R2, 7),
		asm.Add.Reg(asm.R3, asm.R2),
		asm.Mov.Reg(asm.R0, asm.R3),
		asm.Return(),
	}, 5},
	{"killed by a load", asm.Instructions{
		storeImm64(-8, 7),
		asm.LoadMem(asm.R0, asm.R1, 0, asm.DWord),
		asm.Mov.Reg(asm.R4, asm.R0),
		asm.LoadMem(asm.R0, asm.RFP, -8, asm.DWord),
		asm.Add.Reg(asm.R0, asm.R4),
		asm.Return(),
	}, 5},
	{"killed by a call", asm.Instructions{
		asm.LoadMem(asm.R0, asm.R1, 0, asm.DWord),
		asm.Mov.Reg(asm.R6, asm.R0),
		asm.FnGetSmpProcessorId.Call(),
		asm.Mov.Reg(asm.R0, asm.R6),
		asm.Add.Imm(asm.R0, 7),
		asm.Return(),
	}, 5},
	{"killed later", asm.Instructions{
		asm.LoadMem(asm.R0, asm.R1, 0, asm.DWord),
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.Add.Imm(asm.R3, 3),
		asm.StoreMem(asm.RFP, -8, asm.R3, asm.DWord),
		asm.Mov.Imm(asm.R0, 4),
		asm.Add.Reg(asm.R0, asm.R3),
		asm.Return(),
	}, 6},
	{"read before it is killed", asm.Instructions{
		asm.LoadMem(asm.R0, asm.R1, 0, asm.DWord),
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.Add.Imm(asm.R3, 7),
		asm.StoreMem(asm.RFP, -8, asm.R0, asm.DWord),
		asm.Mov.Reg(asm.R0, asm.R3),
		asm.Return(),
	}, 6},
	{"a jump before it is killed", asm.Instructions{
		asm.LoadMem(asm.R0, asm.R1, 0, asm.DWord),
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.JEq.Imm(asm.R3, 1234, "out"),
		asm.Mov.Imm(asm.R0, 7),
		asm.Add.Reg(asm.R0, asm.R3),
		asm.Return(),
		asm.Add.Imm(asm.R0, 7).WithSymbol("out"),
		asm.Return(),
	}, 8},
	{"read by the next", asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 0, asm.DWord),
		asm.Mov.Reg(asm.R3, asm.R2),
		asm.Mov.Reg(asm.R2, asm.R2),
		asm.Mov.Imm(asm.R2, 7),
		asm.Add.Reg(asm.R3, asm.R2),
		asm.Mov.Reg(asm.R0, asm.R3),
		asm.Return(),
	}, 7},
	{"loaded through", asm.Instructions{
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.LoadMem(asm.R2, asm.R2, -8, asm.DWord),
		asm.LoadMem(asm.R0, asm.R2, 0, asm.DWord),
		asm.Add.Imm(asm.R0, 7),
		asm.Return(),
	}, 7},
	{"computed from itself", asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 0, asm.DWord),
		asm.Add.Imm(asm.R2, 7),
		asm.Mov.Reg(asm.R3, asm.R2),
		asm.Mov.Imm(asm.R2, 0),
		asm.Mov.Reg(asm.R0, asm.R3),
		asm.Return(),
	}, 6},
	{"a labelled copy", asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 0, asm.DWord),
		asm.Add.Imm(asm.R2, 7),
		asm.Mov.Imm(asm.R0, 0),
		asm.JEq.Imm(asm.R0, 0, "copy"),
		asm.Mov.Reg(asm.R3, asm.R2).WithSymbol("copy"),
		asm.Mov.Imm(asm.R2, 0),
		asm.Mov.Reg(asm.R0, asm.R3),
		asm.Return(),
	}, 8},
}

// TestForwardCopiesInstructions checks which copies go: those whose
// source is overwritten, unread, by the next instruction, where no label
// lets another path in.
func TestForwardCopiesInstructions(t *testing.T) {
	for _, p := range copyProgs {
		out := forwardCopies(p.in)
		if len(out) != p.want {
			t.Errorf("%s: %d instructions, want %d:\n%v", p.name, len(out), p.want, out)
		}
	}
	out := forwardCopies(copyProgs[0].in)
	if out[0].Dst != asm.R3 || out[0].Src != asm.R1 {
		t.Errorf("the load writes %v from %v, want r3 from r1", out[0].Dst, out[0].Src)
	}
}

// TestForwardCopiesRuns runs each program before and after forwardCopies
// in the kernel, as a raw tracepoint program: both return the argument
// plus 7.
func TestForwardCopiesRuns(t *testing.T) {
	for _, p := range copyProgs {
		for _, insns := range []asm.Instructions{p.in, forwardCopies(p.in)} {
			prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.RawTracepoint, License: "GPL", Instructions: insns})
			if err != nil {
				t.Fatalf("%s: load: %v", p.name, err)
			}
			for _, arg := range []uint64{0, 35, 1 << 20} {
				got, err := prog.Run(&ebpf.RunOptions{Context: []uint64{arg}})
				if err != nil {
					t.Fatalf("%s: run: %v", p.name, err)
				}
				if uint64(got) != arg+7 {
					t.Errorf("%s (%d instructions): %d gives %d, want %d", p.name, len(insns), arg, got, arg+7)
				}
			}
			prog.Close()
		}
	}
}
