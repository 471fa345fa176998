package codegen

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/types"
)

// A probe whose only output is printf, two calls or more, none in a loop
// nor before an early return, writes one record an event: an
// EventBlock's. Each printf puts its record (as it would send it) at a
// place of its own in a per-CPU map value; the probe's end sends the value
// whole; the runtime prints the records present in order, as one block.
// Two drops on two CPUs then never interleave their lines (whydrop), and
// -f json makes one object of them.
//
// A probe's program does not run nested on its CPU (the kernel's
// recursion guard for tracing programs), so a map of its own is enough.

// BlockAbsent is a block slot's first word where its printf did not run.
const BlockAbsent = ^uint64(0)

// printfBlock is a probe's block: its event, the slot the map value's
// address is kept in, and each printf's offset in the value.
type printfBlock struct {
	ev    *Event
	ptr   int16
	slots map[*lang.CallExpr]int
	size  int
}

// blockPrintfs returns a probe body's printf calls where they make a block.
func (g *gen) blockPrintfs(body *lang.Block) []*lang.CallExpr {
	var calls []*lang.CallExpr
	ok := true
	lang.Inspect(body, func(n lang.Node) bool {
		switch n := n.(type) {
		case *lang.ForStmt, *lang.WhileStmt, *lang.UnrollStmt, *lang.JumpStmt:
			ok = false
		case *lang.CallExpr:
			switch n.Name {
			case "printf":
				calls = append(calls, n)
			case "print", "time", "cat", "join", "capture", "exit", "clear", "zero", "track":
				ok = false
			}
		}
		return ok
	})
	if !ok || len(calls) < 2 {
		return nil
	}
	return calls
}

// printfSize is the bytes a printf call's record takes (output's layout).
func (g *gen) printfSize(c *lang.CallExpr) int {
	n := 8
	for _, a := range c.Args[1:] {
		n += SlotSize(g.info.Types[a])
	}
	return n
}

// startBlock opens the probe's block, where it makes one: the map value is
// looked up (its address kept), its event id written and every slot
// marked absent.
func (g *gen) startBlock(body *lang.Block) error {
	g.pb = nil
	calls := g.blockPrintfs(body)
	if calls == nil {
		return nil
	}
	b := &printfBlock{ev: &Event{ID: len(g.out.Events), Kind: EventBlock, Probe: g.spec.Spec.Name + g.target.Name, End: g.spec.Spec.Kind == lang.ProbeEnd},
		slots: map[*lang.CallExpr]int{}, size: 8}
	for _, c := range calls {
		for _, a := range c.Args[1:] {
			t := g.info.Types[a]
			if !inReg(t) && t.Kind != types.String && t.Kind != types.Addr && t.Kind != types.Endpoint && t.Kind != types.Packet && t.Kind != types.Tuple {
				return nil // output() reports it
			}
		}
		b.slots[c] = b.size
		b.ev.Slots = append(b.ev.Slots, b.size)
		b.size += g.printfSize(c)
	}
	b.ev.Size = b.size
	ptr, err := g.frame.keep(8)
	if err != nil {
		return err
	}
	b.ptr = ptr
	g.out.Events = append(g.out.Events, b.ev)
	name := fmt.Sprintf("blk%d", b.ev.ID)
	g.maps.specs[name] = &ebpf.MapSpec{Name: name, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: uint32(b.size), MaxEntries: 1}
	g.maps.eventMaps()
	g.emit(
		storeImm64(ptr, 0),
		asm.LoadMapPtr(asm.R1, 0).WithReference(name),
		asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, int32(ptr)),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, exitLabel),
		asm.StoreMem(asm.RFP, ptr, asm.R0, asm.DWord),
		storeImm64At(asm.R0, 0, int32(b.ev.ID)),
	)
	for _, off := range b.ev.Slots {
		g.emit(storeImm64At(asm.R0, int16(off), -1))
	}
	g.pb = b
	return nil
}

// putBlock copies a printf's record, built at rec, into its block slot;
// false where the call is not in the probe's block (send it).
func (g *gen) putBlock(c *lang.CallExpr, rec int16, size int) bool {
	if g.pb == nil {
		return false
	}
	off, ok := g.pb.slots[c]
	if !ok {
		return false
	}
	g.emit(asm.LoadMem(asm.R1, asm.RFP, g.pb.ptr, asm.DWord))
	for i := 0; i < size; i += 8 {
		g.emit(
			asm.LoadMem(asm.R0, asm.RFP, rec+int16(i), asm.DWord),
			asm.StoreMem(asm.R1, int16(off+i), asm.R0, asm.DWord),
		)
	}
	return true
}

// endBlock sends the block at the end of the probe's body.
func (g *gen) endBlock() {
	if g.pb == nil {
		return
	}
	b := g.pb
	g.submitWith(func(data, size asm.Register) {
		g.emit(asm.LoadMem(data, asm.RFP, b.ptr, asm.DWord), asm.Mov.Imm(size, int32(b.size)))
	})
	g.pb = nil
}

// storeImm64At stores n, sign-extended to 64 bits, at off from dst.
func storeImm64At(dst asm.Register, off int16, n int32) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(asm.DWord), Dst: dst, Offset: off, Constant: int64(n)}
}
