package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/stdlib"
)

// basePtr pushes the pointer a field's member chain starts from: the skb,
// its shared info (skb->head + skb->end), or its conntrack entry
// (skb->_nfct less the ctinfo bits, 0 without one: reads from it give 0).
func (g *gen) basePtr(b stdlib.Base) error {
	if b == stdlib.BaseXdp {
		return g.xdpPtr()
	}
	if err := g.skbPtr(); err != nil {
		return err
	}
	switch b {
	case stdlib.BaseShinfo:
		head, end, err := shinfoOffsets(g.info.SkbType)
		if err != nil {
			return err
		}
		slot, err := g.readScratch()
		if err != nil {
			return err
		}
		tmp, err := g.frame.alloc(8)
		if err != nil {
			return err
		}
		g.vs.pop(asm.R3)
		g.emit(asm.StoreMem(asm.RFP, tmp, asm.R3, asm.DWord))
		g.emit(zero8(slot)...)
		g.emit(asm.Add.Imm(asm.R3, end))
		g.probeRead(slot, 4) // sk_buff_data_t: an offset from head on 64-bit
		g.emit(asm.LoadMem(asm.R3, asm.RFP, tmp, asm.DWord), asm.Add.Imm(asm.R3, head))
		g.probeRead(tmp, 8)
		g.emit(
			asm.LoadMem(asm.R0, asm.RFP, tmp, asm.DWord),
			asm.LoadMem(asm.R1, asm.RFP, slot, asm.DWord),
			asm.Add.Reg(asm.R0, asm.R1),
		)
		return g.vs.push(asm.R0)
	case stdlib.BaseConn:
		if err := g.nfct(); err != nil {
			return err
		}
		g.vs.pop(asm.R0)
		g.emit(asm.And.Imm(asm.R0, ^int32(7)))
		return g.vs.push(asm.R0)
	}
	return nil
}

// nfct replaces the skb pointer on the stack with skb->_nfct: the
// conntrack entry's address with the ctinfo in its low three bits.
func (g *gen) nfct() error {
	off, err := skbOffset(g.info.SkbType, "_nfct")
	if err != nil {
		return err
	}
	slot, err := g.readScratch()
	if err != nil {
		return err
	}
	g.vs.pop(asm.R3)
	g.emit(zero8(slot)...)
	g.emit(asm.Add.Imm(asm.R3, off))
	g.probeRead(slot, 8)
	g.emit(asm.LoadMem(asm.R0, asm.RFP, slot, asm.DWord))
	return g.vs.push(asm.R0)
}

// ctState computes ct_state from skb->_nfct as nftables' ct state bits:
// invalid without an entry, untracked for the template, else one bit per
// ctinfo (established, related, new), whichever the direction.
func (g *gen) ctState() error {
	if err := g.skbPtr(); err != nil {
		return err
	}
	if err := g.nfct(); err != nil {
		return err
	}
	done, orig := g.label("ct_done"), g.label("ct_orig")
	g.vs.pop(asm.R1)
	g.emit(
		asm.Mov.Imm(asm.R0, stdlib.CtInvalid),
		asm.JEq.Imm(asm.R1, 0, done),
		asm.And.Imm(asm.R1, 7),
		asm.Mov.Imm(asm.R0, stdlib.CtUntracked),
		asm.JEq.Imm(asm.R1, 7, done),
		asm.JLT.Imm(asm.R1, 3, orig),
		asm.Sub.Imm(asm.R1, 3), // IP_CT_IS_REPLY
		asm.Mov.Imm(asm.R0, 2).WithSymbol(orig),
		asm.LSh.Reg(asm.R0, asm.R1),
	)
	g.mark(done)
	return g.vs.push(asm.R0)
}
