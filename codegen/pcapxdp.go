package codegen

import "github.com/cilium/ebpf/asm"

// xdpFrame reports whether the program is a bpf:xdp or bpfret:xdp one,
// whose packet is a frame (the kernel's struct xdp_buff), not an skb.
func (g *gen) xdpFrame() bool {
	return g.target.bpf != nil && g.target.bpf.Type == "xdp"
}

// parseFrame fills the packet slots (pktSlots) from an XDP frame: its link
// header is at xdp->data and it ends at xdp->data_end, all of it linear;
// no header is synthesized and no VLAN tag is out of band. pcap(), pkt
// and the filters of --filter read an XDP program's frame so. A NULL
// context jumps to short.
func (g *gen) parseFrame(short string) error {
	sl := *g.pkt
	data, end, err := g.xdpBounds()
	if err != nil {
		return err
	}
	if err := g.loadArg(asm.R0, 0); err != nil {
		return err
	}
	g.emit(asm.JEq.Imm(asm.R0, 0, short), asm.StoreMem(asm.RFP, sl.skb, asm.R0, asm.DWord))
	for _, m := range []struct {
		slot int16
		off  int32
	}{{sl.base, data}, {sl.flen, end}} {
		g.emit(asm.LoadMem(asm.R3, asm.RFP, sl.skb, asm.DWord), asm.Add.Imm(asm.R3, m.off))
		g.emit(zero8(m.slot)...)
		g.probeRead(m.slot, 8)
	}
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, sl.flen, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, sl.base, asm.DWord),
		asm.Sub.Reg(asm.R0, asm.R1),
		asm.StoreMem(asm.RFP, sl.flen, asm.R0, asm.DWord),
		asm.StoreMem(asm.RFP, sl.lin, asm.R0, asm.DWord),
	)
	g.emit(zero8(sl.synth)...)
	g.emit(zero8(sl.vlan)...)
	return nil
}

// headSkb puts in R0 what a print record's skb field holds: the skb, 0 in
// a probe without one, and in an XDP program the frame's struct xdp_buff
// (the same at the program's entry and return: --timeline and --graph
// group a frame's hops by it).
func (g *gen) headSkb() error {
	switch {
	case g.hasSkb():
		if err := g.skbPtr(); err != nil {
			return err
		}
		g.vs.pop(asm.R0)
	case g.xdpFrame():
		return g.loadArg(asm.R0, 0)
	default:
		g.emit(asm.Mov.Imm(asm.R0, 0))
	}
	return nil
}
