package codegen

import (
	"fmt"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// TestChunksStack: the merged program keeps the context in a slot below
// its probes' frames, so a probe whose frame (with its callbacks' on top)
// leaves no room for it keeps a program of its own, and probes whose frames
// and callbacks' frames would not fit together are split apart.
func TestChunksStack(t *testing.T) {
	prog := func(frame, callee int) *Program {
		return &Program{Prog: &ebpf.ProgramSpec{Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}}, frame: frame, callee: callee}
	}
	cases := []struct {
		progs []*Program
		want  string
	}{
		{[]*Program{prog(16, 0), prog(504, 0), prog(8, 0)}, "[[0 1 2]]"},
		{[]*Program{prog(16, 0), prog(512, 0), prog(8, 0)}, "[[0] [1] [2]]"},
		{[]*Program{prog(16, 0), prog(505, 0), prog(8, 0), prog(24, 0)}, "[[0] [1] [2 3]]"},
		// 256 of frame and 256 of callbacks fit alone, not with the slot.
		{[]*Program{prog(256, 256), prog(8, 0)}, "[[0] [1]]"},
		// 200 and a slot round up to 224; 288 of callbacks on top fit.
		{[]*Program{prog(200, 0), prog(8, 288)}, "[[0 1]]"},
		{[]*Program{prog(232, 0), prog(8, 288)}, "[[0] [1]]"},
	}
	for _, c := range cases {
		idx := make([]int, len(c.progs))
		for i := range idx {
			idx[i] = i
		}
		if got := fmt.Sprint(chunks(c.progs, idx)); got != c.want {
			var frames []string
			for _, p := range c.progs {
				frames = append(frames, fmt.Sprintf("%d+%d", p.frame, p.callee))
			}
			t.Errorf("frames %v: chunks %s, want %s", frames, got, c.want)
		}
	}
}
