package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/pcapfilter"
)

// tunnelSlots readies the offset slots of a filter that has vxlan or
// geneve (pcapfilter.SlotLink...): kept across statements, 8 bytes each,
// set to pcapfilter.NoInner when the filter starts. A filter without a
// tunnel needs none.
func (g *gen) tunnelSlots(filter lang.Expr) error {
	uses := false
	lang.Inspect(filter, func(n lang.Node) bool {
		if c, ok := n.(*lang.CallExpr); ok && c.Name == pcapfilter.SetOffsetFunc {
			uses = true
		}
		return !uses
	})
	if !uses {
		return nil
	}
	if g.pkt.tun == 0 {
		off, err := g.frame.keep(8 * pcapfilter.Slots)
		if err != nil {
			return err
		}
		g.pkt.tun = off
	}
	// NoInner as a 64-bit value: past every packet's end, and so after
	// the few bytes an inner primitive adds to it.
	g.emit(asm.LoadImm(asm.R0, pcapfilter.NoInner, asm.DWord))
	for i := range pcapfilter.Slots {
		g.emit(asm.StoreMem(asm.RFP, g.pkt.tun+int16(8*i), asm.R0, asm.DWord))
	}
	return nil
}

// tunnelSlot is the frame offset of the slot a call names (its first
// argument, a constant).
func (g *gen) tunnelSlot(e *lang.CallExpr) (int16, error) {
	n := g.info.Consts[e.Args[0]].Int
	if g.pkt == nil || g.pkt.tun == 0 || g.pcapShort == "" || n < 0 || n >= pcapfilter.Slots {
		return 0, unsupported(e, e.Name+" outside a filter")
	}
	return g.pkt.tun + int16(8*n), nil
}

// pcapOffset pushes an offset slot's value.
func (g *gen) pcapOffset(e *lang.CallExpr) error {
	at, err := g.tunnelSlot(e)
	if err != nil {
		return err
	}
	g.emit(asm.LoadMem(asm.R0, asm.RFP, at, asm.DWord))
	return g.vs.push(asm.R0)
}

// pcapSetOffset stores its second argument in an offset slot and pushes 1.
func (g *gen) pcapSetOffset(e *lang.CallExpr) error {
	at, err := g.tunnelSlot(e)
	if err != nil {
		return err
	}
	if err := g.expr(e.Args[1]); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	g.emit(asm.StoreMem(asm.RFP, at, asm.R0, asm.DWord), asm.Mov.Imm(asm.R0, 1))
	return g.vs.push(asm.R0)
}
