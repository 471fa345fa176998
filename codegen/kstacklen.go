package codegen

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// KstackBufMap is a per-CPU buffer of StackDepth frames that len(kstack)
// has bpf_get_stack fill: the stack map keeps frames behind an ID, and
// the BPF stack has no room for them.
const KstackBufMap = "kstack_buf"

// kstackLen pushes len(kstack), bpftrace 0.26's depth of the kernel stack
// in frames: bpf_get_stack's bytes over 8, 0 where it fails. The frames
// kstack does not print are skipped: a raw tracepoint's, tp_btf's and
// fentry's stacks start in the program and the code that runs it (two
// frames, bpf_prog_... and bpf_trace_runN or the trampoline), where a
// kprobe's and a classic tracepoint's start at the traced code.
func (g *gen) kstackLen() error {
	skip := int32(0)
	if g.ctx == ctxArgs {
		skip = 2
	}
	if _, ok := g.maps.specs[KstackBufMap]; !ok {
		g.maps.specs[KstackBufMap] = &ebpf.MapSpec{Name: KstackBufMap, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8 * StackDepth, MaxEntries: 1}
	}
	key, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	none := g.label("kstack_len")
	g.emit(storeImm64(key, 0))
	g.lookup(KstackBufMap, key)
	g.emit(
		asm.JEq.Imm(asm.R0, 0, none),
		asm.Mov.Reg(asm.R1, asm.R9),
		asm.Mov.Reg(asm.R2, asm.R0),
		asm.Mov.Imm(asm.R3, 8*StackDepth),
		asm.Mov.Imm(asm.R4, skip), // BPF_F_SKIP_FIELD_MASK
		asm.FnGetStack.Call(),
		asm.JSGE.Imm(asm.R0, 0, none+"_ok"),
		asm.Mov.Imm(asm.R0, 0),
		asm.RSh.Imm(asm.R0, 3).WithSymbol(none+"_ok"),
		asm.Ja.Label(none+"_done"),
	)
	g.emit(asm.Mov.Imm(asm.R0, 0).WithSymbol(none))
	g.mark(none + "_done")
	return g.vs.push(asm.R0)
}
