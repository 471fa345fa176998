package codegen

import (
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// kfuncCall calls the kernel function whose vmlinux BTF id is id.
func kfuncCall(id btf.TypeID) asm.Instruction {
	return asm.Instruction{OpCode: asm.OpCode(asm.JumpClass).SetJumpOp(asm.Call), Src: asm.PseudoKfuncCall, Constant: int64(id)}
}

// commPidInto writes comm(pid) into the zeroed size bytes at the frame
// offset at: the task of that pid from the kfunc bpf_task_from_pid, its
// comm read, the task released; "N/A" where no task has the pid, as
// bpftrace says it. The checker allowed it only where the program type
// may call the kfunc, and found the ids (check.CommPidInfo).
func (g *gen) commPidInto(e *lang.CallExpr, at int16, size int) error {
	ci := g.info.CommPid
	if ci == nil {
		return unsupported(e, "comm(pid) here")
	}
	task, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	if err := g.expr(e.Args[0]); err != nil {
		return err
	}
	g.vs.pop(asm.R1)
	none, done := g.label("comm_none"), g.label("comm_done")
	g.emit(
		asm.LSh.Imm(asm.R1, 32), asm.ArSh.Imm(asm.R1, 32), // a pid_t
		// The slot keeps the pid until the task is found, for the warning.
		asm.StoreMem(asm.RFP, task, asm.R1, asm.DWord),
		kfuncCall(ci.TaskFromPid),
		asm.JEq.Imm(asm.R0, 0, none),
		asm.StoreMem(asm.RFP, task, asm.R0, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.RFP), asm.Add.Imm(asm.R1, int32(at)),
		asm.Mov.Imm(asm.R2, int32(min(size, 16))),
		asm.LoadMem(asm.R3, asm.RFP, task, asm.DWord), asm.Add.Imm(asm.R3, int32(ci.CommOffset)),
		asm.FnProbeReadKernelStr.Call(),
		asm.LoadMem(asm.R1, asm.RFP, task, asm.DWord),
		kfuncCall(ci.TaskRelease),
		asm.Ja.Label(done),
	)
	g.mark(none)
	if err := g.noSuchPid(e, task); err != nil {
		return err
	}
	g.storeString(at, size, "N/A")
	g.mark(done)
	return nil
}

// noSuchPid sends bpftrace's warning for comm(pid) of a pid no task has,
// with the call's place: the pid is in the frame at slot.
func (g *gen) noSuchPid(e *lang.CallExpr, slot int16) error {
	ev := &Event{ID: len(g.out.Events), Kind: EventPrintf, Size: 16,
		Verbs: []stdlib.Verb{{Text: g.info.Where(e) + ": WARNING: No such process (pid=", Conv: 'd', Length: "ll"}, {Text: ")\n"}},
		Args:  []EventArg{{Type: types.S64, Offset: 8, Size: 8}},
		Probe: g.spec.Spec.Name + g.target.Name, End: g.spec.Spec.Kind == lang.ProbeEnd}
	rec, err := g.frame.alloc(ev.Size)
	if err != nil {
		return err
	}
	g.maps.eventMaps()
	g.emit(storeImm64(rec, int32(ev.ID)), asm.LoadMem(asm.R1, asm.RFP, slot, asm.DWord), asm.StoreMem(asm.RFP, rec+8, asm.R1, asm.DWord))
	g.submit(rec, ev.Size)
	g.out.Events = append(g.out.Events, ev)
	return nil
}
