package codegen

import (
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// classify is a program as the generator leaves it: a jump over a goto
// (`if p == 132 goto ports; goto zero; ports:`) and an if without else
// (`goto endif` right before endif). It returns 1 for a ports protocol
// (6, 17, 132), 2 for the rest, plus 10 when the argument is 17.
func classify() asm.Instructions {
	return asm.Instructions{
		asm.Mov.Imm(asm.R0, 0), // the label markers read R0
		asm.LoadMem(asm.R2, asm.R1, 0, asm.DWord),
		asm.JEq.Imm(asm.R2, 6, "ports"),
		asm.JEq.Imm(asm.R2, 17, "ports"),
		asm.JEq.Imm(asm.R2, 132, "ports"),
		asm.Ja.Label("zero"),
		asm.Mov.Reg(asm.R0, asm.R0).WithSymbol("ports"),
		asm.Mov.Imm(asm.R0, 1),
		asm.Ja.Label("done"),
		asm.Mov.Imm(asm.R0, 2).WithSymbol("zero"),
		asm.Mov.Reg(asm.R0, asm.R0).WithSymbol("done"),
		asm.JNE.Imm(asm.R2, 17, "else"),
		asm.Add.Imm(asm.R0, 10),
		asm.Ja.Label("endif"),
		asm.Mov.Reg(asm.R0, asm.R0).WithSymbol("else"),
		asm.Mov.Reg(asm.R0, asm.R0).WithSymbol("endif"),
		asm.Return(),
	}
}

// TestThreadJumpsInstructions checks the rewrites on classify: the jump
// over `goto zero` turns into `if p != 132 goto zero`, and the gotos to the
// next instruction go; the other jumps keep their labels.
func TestThreadJumpsInstructions(t *testing.T) {
	out := peephole(classify())
	want := []struct {
		op  asm.OpCode
		ref string
	}{
		{asm.Mov.Imm(asm.R0, 0).OpCode, ""},
		{asm.LoadMem(asm.R2, asm.R1, 0, asm.DWord).OpCode, ""},
		{asm.JEq.Imm(asm.R2, 6, "").OpCode, "ports"},
		{asm.JEq.Imm(asm.R2, 17, "").OpCode, "ports"},
		{asm.JNE.Imm(asm.R2, 132, "").OpCode, "zero"},
		{asm.Mov.Imm(asm.R0, 1).OpCode, ""},
		{asm.Ja.Label("").OpCode, "done"},
		{asm.Mov.Imm(asm.R0, 2).OpCode, ""},
		{asm.JNE.Imm(asm.R2, 17, "").OpCode, "else"},
		{asm.Add.Imm(asm.R0, 10).OpCode, ""},
		{asm.Return().OpCode, ""},
	}
	if len(out) != len(want) {
		t.Fatalf("got %d instructions, want %d:\n%v", len(out), len(want), out)
	}
	for i, w := range want {
		if out[i].OpCode != w.op || out[i].Reference() != w.ref {
			t.Errorf("instruction %d is %v, want opcode %v to %q", i, out[i], w.op, w.ref)
		}
	}
	if out[4].Constant != 132 || out[5].Symbol() != "ports" {
		t.Errorf("the inverted jump is %v and ports labels %v", out[4], out[5])
	}
}

// TestThreadJumpsLeavesLabelledGotos checks that a goto other jumps land
// on, or a JSet (which has no inverse), is kept.
func TestThreadJumpsLeavesLabelledGotos(t *testing.T) {
	in := asm.Instructions{
		asm.JEq.Imm(asm.R1, 0, "a"),
		asm.Ja.Label("b").WithSymbol("c"),
		asm.Mov.Imm(asm.R0, 1).WithSymbol("b"),
		asm.JSet.Imm(asm.R1, 1, "d"),
		asm.Ja.Label("e"),
		asm.Mov.Imm(asm.R0, 2).WithSymbol("d"),
		asm.Mov.Imm(asm.R0, 3).WithSymbol("e"),
		asm.Mov.Imm(asm.R0, 4).WithSymbol("a"),
		asm.Return(),
	}
	if out := threadJumps(in); len(out) != len(in) {
		t.Errorf("got %d instructions, want all %d:\n%v", len(out), len(in), out)
	}
}

// TestThreadJumpsRuns loads classify before and after the peephole as a
// raw tracepoint program and runs both on the kernel for each protocol:
// the results agree and match what classify computes.
func TestThreadJumpsRuns(t *testing.T) {
	progs := map[string]asm.Instructions{"as generated": classify(), "threaded": peephole(classify())}
	for name, insns := range progs {
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.RawTracepoint, License: "GPL", Instructions: insns})
		if err != nil {
			t.Fatalf("%s: load: %v", name, err)
		}
		defer prog.Close()
		for arg, want := range map[uint64]uint32{6: 1, 17: 11, 132: 1, 1: 2, 0: 2, 133: 2} {
			got, err := prog.Run(&ebpf.RunOptions{Context: []uint64{arg}})
			if err != nil {
				t.Fatalf("%s: run: %v", name, err)
			}
			if got != want {
				t.Errorf("%s: %d gives %d, want %d", name, arg, got, want)
			}
		}
	}
}
