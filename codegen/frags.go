package codegen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// captureFrags appends a non-linear skb's paged data to a capture record
// whose linear part is copied: the scratch record's address is in the
// slot sl.tmp, how many bytes it holds at its CaptureLen (and the frame's
// rec+CaptureLen), which this updates in both. Each of
// skb_shinfo(skb)->frags[], in order, up to the packet's length or the
// snap length, its page translated to its direct-map address as
// Options.PageMul and PageOff say. A bounded loop of at most MAX_SKB_FRAGS
// turns; the skb's frag_list is not followed.
func (g *gen) captureFrags(sl pktSlots, rec int16, snap int) error {
	fl := g.info.Frags
	if fl == nil || g.maps.pageMul == 0 {
		return nil
	}
	if fl.FragSize > 32 {
		return fmt.Errorf("this kernel's skb_frag_t is %d bytes", fl.FragSize)
	}
	var slots [5]int16 // want, shinfo, i, nr_frags, frag
	for i := range slots {
		n := 8
		if i == 4 {
			n = int(fl.FragSize)
		}
		off, err := g.frame.alloc(n)
		if err != nil {
			return err
		}
		slots[i] = off
	}
	want, shinfo, idx, nr, frag := slots[0], slots[1], slots[2], slots[3], slots[4]
	done, loop, next := g.label("frags_done"), g.label("frags_loop"), g.label("frags_next")
	// want = min(flen, snap): nothing to add where the linear part has it.
	g.emit(
		asm.LoadMem(asm.R1, asm.RFP, sl.flen, asm.DWord),
		asm.JSLE.Imm(asm.R1, int32(snap), done+"_min"),
		asm.Mov.Imm(asm.R1, int32(snap)),
		asm.StoreMem(asm.RFP, want, asm.R1, asm.DWord).WithSymbol(done+"_min"),
		asm.LoadMem(asm.R2, asm.RFP, rec+CaptureLen, asm.DWord),
		asm.JSGE.Reg(asm.R2, asm.R1, done),
	)
	// shinfo = skb->head + skb->end; nr = its nr_frags.
	if err := g.skbPtrOr(done); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	head, end, err := shinfoOffsets(g.info.SkbType)
	if err != nil {
		return err
	}
	g.emit(asm.StoreMem(asm.RFP, idx, asm.R0, asm.DWord), asm.Mov.Reg(asm.R3, asm.R0), asm.Add.Imm(asm.R3, head))
	g.probeRead(shinfo, 8)
	g.emit(asm.LoadMem(asm.R3, asm.RFP, idx, asm.DWord), asm.Add.Imm(asm.R3, end))
	g.emit(zero8(nr)...)
	g.probeRead(nr, 4) // sk_buff_data_t: an offset from head on 64-bit
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, shinfo, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, nr, asm.DWord),
		asm.Add.Reg(asm.R0, asm.R1),
		asm.StoreMem(asm.RFP, shinfo, asm.R0, asm.DWord),
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.Add.Imm(asm.R3, int32(fl.NrFrags)),
	)
	g.emit(zero8(nr)...)
	g.probeRead(nr, 1)
	g.emit(zero8(idx)...)
	// The loop: frag = frags[i]; its bytes, at most want - copied.
	g.emit(
		asm.LoadMem(asm.R1, asm.RFP, idx, asm.DWord).WithSymbol(loop),
		asm.JGE.Imm(asm.R1, int32(fl.MaxFrags), done),
		asm.LoadMem(asm.R2, asm.RFP, nr, asm.DWord),
		asm.JGE.Reg(asm.R1, asm.R2, done),
		asm.Mul.Imm(asm.R1, int32(fl.FragSize)),
		asm.LoadMem(asm.R3, asm.RFP, shinfo, asm.DWord),
		asm.Add.Reg(asm.R3, asm.R1),
		asm.Add.Imm(asm.R3, int32(fl.Frags)),
	)
	for off := int16(0); off < int16(fl.FragSize); off += 8 {
		g.emit(zero8(frag + off)...)
	}
	g.probeRead(frag, int(fl.FragSize))
	g.emit(
		// src = page * mul + off + the frag's offset; netmem with its low
		// bit set is not a page.
		asm.LoadMem(asm.R3, asm.RFP, frag+int16(fl.Page), asm.DWord),
		asm.JEq.Imm(asm.R3, 0, done),
		asm.Mov.Reg(asm.R0, asm.R3),
		asm.And.Imm(asm.R0, 1),
		asm.JNE.Imm(asm.R0, 0, done),
		asm.Mul.Imm(asm.R3, int32(g.maps.pageMul)),
		asm.LoadImm(asm.R0, int64(g.maps.pageOff), asm.DWord),
		asm.Add.Reg(asm.R3, asm.R0),
		asm.LoadMem(asm.R0, asm.RFP, frag+int16(fl.Off), sizeOf(int(fl.OffSize))),
		asm.Add.Reg(asm.R3, asm.R0),
		// n = min(len, want - copied). The count copied so far lives in
		// the scratch record, not the frame: read from a map, it is a
		// scalar the verifier knows nothing of, the same on every path,
		// so each turn's paths meet at the loop's head as one state
		// (on the frame, each path's range of it is a state of its own:
		// about 116,000 instructions to verify instead of 5,000).
		asm.LoadMem(asm.R2, asm.RFP, frag+int16(fl.Len), sizeOf(int(fl.LenSize))),
		asm.LoadMem(asm.R0, asm.RFP, sl.tmp, asm.DWord),
		asm.LoadMem(asm.R4, asm.R0, CaptureLen, asm.DWord),
		asm.LoadMem(asm.R5, asm.RFP, want, asm.DWord),
		asm.Sub.Reg(asm.R5, asm.R4),
		asm.JLE.Reg(asm.R2, asm.R5, next+"_n"),
		asm.Mov.Reg(asm.R2, asm.R5),
		asm.JEq.Imm(asm.R2, 0, next).WithSymbol(next+"_n"),
		asm.JGT.Imm(asm.R2, int32(snap), done),
		asm.JGT.Imm(asm.R4, int32(snap), done),
		asm.Mov.Reg(asm.R5, asm.R4),
		asm.Add.Reg(asm.R5, asm.R2),
		asm.StoreMem(asm.R0, CaptureLen, asm.R5, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, sl.tmp, asm.DWord),
		asm.Add.Imm(asm.R1, CaptureHead),
		asm.Add.Reg(asm.R1, asm.R4),
	)
	g.tagShift(asm.R1)
	g.emit(
		asm.FnProbeReadKernel.Call(),
		asm.LoadMem(asm.R1, asm.RFP, idx, asm.DWord).WithSymbol(next),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.RFP, idx, asm.R1, asm.DWord),
		asm.Ja.Label(loop),
	)
	// The frame's header has the length from before the loop: the
	// scratch record's, which the loop updated, again.
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, sl.tmp, asm.DWord).WithSymbol(done),
		asm.LoadMem(asm.R1, asm.R0, CaptureLen, asm.DWord),
		asm.StoreMem(asm.RFP, rec+CaptureLen, asm.R1, asm.DWord),
	)
	return nil
}
