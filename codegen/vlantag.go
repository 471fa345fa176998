package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/stdlib"
)

// vlanPresent makes the vlan value on the stack 0 where the skb has no tag.
// Before 6.2 an skb says so by its vlan_present bit, and clearing a tag
// clears only that bit: vlan_tci keeps the old tag. From 6.2 on, a cleared
// tag is vlan_all 0, and vlan_tci is what the field read.
func (g *gen) vlanPresent(btfBase bool) error {
	v := vlanLayout(g.info.SkbType)
	if v == nil || v.presentBit < 0 {
		return nil
	}
	if err := g.basePtr(stdlib.BaseSkb); err != nil {
		return err
	}
	bit := check.Member{Name: "vlan_present", Offset: uint32(v.presentBit), BitfieldSize: 1, Type: types.U8}
	if err := g.readPath([]check.Member{bit}, types.U8, false, btfBase); err != nil {
		return err
	}
	g.vs.pop(asm.R1)
	g.vs.pop(asm.R0)
	g.emit(asm.Mul.Reg(asm.R0, asm.R1))
	return g.vs.push(asm.R0)
}

// tagShift adds to the pointer in r 4 where the packet has an out-of-band
// VLAN tag: its bytes are copied past the tag's place. Clobbers R0.
func (g *gen) tagShift(r asm.Register) {
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, g.pkt.vlan, asm.DWord),
		asm.RSh.Imm(asm.R0, 32),
		asm.And.Imm(asm.R0, 1),
		asm.LSh.Imm(asm.R0, 2),
		asm.Add.Reg(r, asm.R0),
	)
}

// captureTag completes a capture record whose bytes were copied 4 bytes
// further for an out-of-band VLAN tag: the MAC addresses move to the
// front, the tag follows them as on the wire, and the lengths count it.
func (g *gen) captureTag(rec int16, snap int) {
	sl := *g.pkt
	done, capped := g.label("tag_done"), g.label("tag_capped")
	g.emit(
		asm.LoadMem(asm.R2, asm.RFP, sl.vlan, asm.DWord),
		asm.JEq.Imm(asm.R2, 0, done),
		asm.LoadMem(asm.R0, asm.RFP, sl.tmp, asm.DWord),
		asm.LoadMem(asm.R1, asm.R0, CaptureHead+4, asm.DWord),
		asm.StoreMem(asm.R0, CaptureHead, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R0, CaptureHead+12, asm.Word),
		asm.StoreMem(asm.R0, CaptureHead+8, asm.R1, asm.Word),
		asm.HostTo(asm.BE, asm.R2, asm.Word),
		asm.StoreMem(asm.R0, CaptureHead+12, asm.R2, asm.Word),
		// Lengths: the tag's 4 bytes more, the captured ones up to snap.
		asm.LoadMem(asm.R1, asm.R0, CaptureOrigLen, asm.DWord),
		asm.Add.Imm(asm.R1, 4),
		asm.StoreMem(asm.R0, CaptureOrigLen, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, rec+CaptureLen, asm.DWord),
		asm.Add.Imm(asm.R1, 4),
		asm.JLE.Imm(asm.R1, int32(snap), capped),
		asm.Mov.Imm(asm.R1, int32(snap)),
		asm.StoreMem(asm.RFP, rec+CaptureLen, asm.R1, asm.DWord).WithSymbol(capped),
		asm.StoreMem(asm.R0, CaptureLen, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R0, CaptureSynth, asm.DWord),
		asm.Or.Imm(asm.R1, CaptureTagged),
		asm.StoreMem(asm.R0, CaptureSynth, asm.R1, asm.DWord),
	)
	g.mark(done)
}
