package codegen

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
)

// bpftrace's join(array [, sep]) prints the strings of a NULL-ended array
// of string pointers (execsnoop's args.argv), joined by sep (a space), and
// a newline. The strings are read in the program, into a per-CPU scratch
// record too big for the stack, and the runtime joins and prints them:
// the record is the call's id, then JoinArgs slots of JoinArgSize bytes,
// each a string; the first empty one (a NULL pointer's) ends the list.

// JoinMap is the per-CPU scratch a join() record is built in.
const JoinMap = "join"

// JoinArgs is how many strings join() reads (bpftrace's 16), JoinArgSize
// how many bytes of each (bpftrace's 1024: a quarter here, which argv's
// words fit, for a record of 4 KiB).
const (
	JoinArgs    = 16
	JoinArgSize = 256
	joinSize    = 8 + JoinArgs*JoinArgSize
)

// join compiles join(array [, sep]).
func (g *gen) join(c *lang.CallExpr) error {
	ev := &Event{ID: len(g.out.Events), Kind: EventJoin, Size: joinSize, Probe: g.spec.Spec.Name + g.target.Name,
		End: g.spec.Spec.Kind == lang.ProbeEnd, Sep: " "}
	if len(c.Args) > 1 {
		ev.Sep = g.info.Consts[c.Args[1]].Str
	}
	if _, ok := g.maps.specs[JoinMap]; !ok {
		g.maps.specs[JoinMap] = &ebpf.MapSpec{Name: JoinMap, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: joinSize, MaxEntries: 1}
	}
	g.maps.eventMaps()
	// The array's pointers and strings are where the array is: a syscall's
	// argv in the process's memory, a kernel array in the kernel's.
	readPtr, readStr := g.readHelper(asm.FnProbeReadKernel), g.readHelper(asm.FnProbeReadKernelStr)
	if g.userPointer(c.Args[0]) {
		readPtr, readStr = asm.FnProbeReadUser, asm.FnProbeReadUserStr
	}
	if err := g.expr(c.Args[0]); err != nil {
		return err
	}
	arr, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	rec, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	elem, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	g.emit(asm.StoreMem(asm.RFP, arr, asm.R0, asm.DWord), zero8(elem)[0])
	skip, done := g.label("join_skip"), g.label("join_done")
	g.lookup(JoinMap, elem)
	g.emit(
		asm.JEq.Imm(asm.R0, 0, skip),
		asm.StoreMem(asm.RFP, rec, asm.R0, asm.DWord),
		asm.Mov.Imm(asm.R1, int32(ev.ID)),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
	)
	for i := range JoinArgs {
		slot := int16(8 + i*JoinArgSize)
		g.emit(
			// An empty slot ends the list, whatever an earlier record
			// left in the ones after it.
			asm.LoadMem(asm.R1, asm.RFP, rec, asm.DWord),
			asm.StoreImm(asm.R1, slot, 0, asm.Byte),
			// The i-th pointer (zeroed where the read fails).
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, int32(elem)),
			asm.Mov.Imm(asm.R2, 8),
			asm.LoadMem(asm.R3, asm.RFP, arr, asm.DWord),
			asm.Add.Imm(asm.R3, int32(8*i)),
			readPtr.Call(),
			asm.LoadMem(asm.R3, asm.RFP, elem, asm.DWord),
			asm.JEq.Imm(asm.R3, 0, done),
			asm.LoadMem(asm.R1, asm.RFP, rec, asm.DWord),
			asm.Add.Imm(asm.R1, int32(slot)),
			asm.Mov.Imm(asm.R2, JoinArgSize),
			readStr.Call(),
		)
	}
	g.mark(done)
	g.submitWith(func(data, size asm.Register) {
		g.emit(asm.LoadMem(data, asm.RFP, rec, asm.DWord), asm.Mov.Imm(size, joinSize))
	})
	g.mark(skip)
	g.out.Events = append(g.out.Events, ev)
	return nil
}
