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
// EventBlock's. Each printf that runs appends its record (as it would
// send it) to a per-CPU map value; the probe's end sends what was
// appended; the runtime prints the records in order, as one block. Two
// drops on two CPUs then never interleave their lines (whydrop), and -f
// json makes one object of them.
//
// A block record: the event id (8 bytes), the bytes used (8, this head
// included), then the printf records one after the other.
//
// A probe's program does not run nested on its CPU (the kernel's
// recursion guard for tracing programs), so a map of its own is enough.

// BlockHead is the bytes before a block's first printf record.
const BlockHead = 16

// printfBlock is a probe's block: its event, the slots the map value's
// address and the bytes used are kept in, and its printf calls.
type printfBlock struct {
	ev    *Event
	ptr   int16
	used  int16
	calls map[*lang.CallExpr]bool
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
// looked up (its address kept), its event id written, nothing used yet.
func (g *gen) startBlock(body *lang.Block) error {
	g.pb = nil
	calls := g.blockPrintfs(body)
	if calls == nil {
		return nil
	}
	b := &printfBlock{ev: &Event{ID: len(g.out.Events), Kind: EventBlock, Probe: g.spec.Spec.Name + g.target.Name, End: g.spec.Spec.Kind == lang.ProbeEnd},
		calls: map[*lang.CallExpr]bool{}, size: BlockHead}
	for _, c := range calls {
		for _, a := range c.Args[1:] {
			t := g.info.Types[a]
			if !inReg(t) && t.Kind != types.String && t.Kind != types.Addr && t.Kind != types.Endpoint && t.Kind != types.Packet && t.Kind != types.Tuple {
				return nil // output() reports it
			}
		}
		b.calls[c] = true
		b.size += g.printfSize(c)
	}
	b.ev.Size = BlockHead
	ptr, err := g.frame.keep(8)
	if err != nil {
		return err
	}
	used, err := g.frame.keep(8)
	if err != nil {
		return err
	}
	b.ptr, b.used = ptr, used
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
		storeImm64(used, BlockHead),
	)
	g.pb = b
	return nil
}

// putBlock appends a printf's record, built at rec, to the block; false
// where the call is not in the probe's block (send it).
func (g *gen) putBlock(c *lang.CallExpr, rec int16, size int) bool {
	if g.pb == nil || !g.pb.calls[c] {
		return false
	}
	full := g.label("blk_full")
	g.emit(
		asm.LoadMem(asm.R2, asm.RFP, g.pb.used, asm.DWord),
		// Never past the value: the verifier sees the bound, and a
		// block cannot hold more than each printf once.
		asm.JGT.Imm(asm.R2, int32(g.pb.size-size), full),
		asm.LoadMem(asm.R1, asm.RFP, g.pb.ptr, asm.DWord),
		asm.Add.Reg(asm.R1, asm.R2),
	)
	for i := 0; i < size; i += 8 {
		g.emit(
			asm.LoadMem(asm.R0, asm.RFP, rec+int16(i), asm.DWord),
			asm.StoreMem(asm.R1, int16(i), asm.R0, asm.DWord),
		)
	}
	g.emit(
		asm.Add.Imm(asm.R2, int32(size)),
		asm.StoreMem(asm.RFP, g.pb.used, asm.R2, asm.DWord),
	)
	g.mark(full)
	return true
}

// endBlock sends the block at the end of the probe's body: its head and
// the records appended.
func (g *gen) endBlock() {
	if g.pb == nil {
		return
	}
	b := g.pb
	skip := g.label("blk_none")
	g.emit(
		asm.LoadMem(asm.R2, asm.RFP, b.used, asm.DWord),
		asm.JLE.Imm(asm.R2, BlockHead, skip),
		asm.JGT.Imm(asm.R2, int32(b.size), skip),
		asm.LoadMem(asm.R1, asm.RFP, b.ptr, asm.DWord),
		asm.StoreMem(asm.R1, 8, asm.R2, asm.DWord),
	)
	g.submitWith(func(data, size asm.Register) {
		// The bounds again, on the register the helper takes the size in.
		g.emit(
			asm.LoadMem(size, asm.RFP, b.used, asm.DWord),
			asm.JGT.Imm(size, int32(b.size), skip),
			asm.JLE.Imm(size, BlockHead, skip),
			asm.LoadMem(data, asm.RFP, b.ptr, asm.DWord),
		)
	})
	g.mark(skip)
	g.pb = nil
}

// storeImm64At stores n, sign-extended to 64 bits, at off from dst.
func storeImm64At(dst asm.Register, off int16, n int32) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(asm.DWord), Dst: dst, Offset: off, Constant: int64(n)}
}
