package codegen

import (
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"

	"github.com/skbtrace/skbtrace/lang"
)

// pktSlots are the frame slots of the packet a compiled pcap filter reads:
// where its link header starts, how long it is, how much of it is linear,
// and, where the skb has no link header yet, the Ethernet type of the one
// the filter sees instead.
type pktSlots struct {
	skb   int16
	base  int16 // kernel address of byte 0 of the link header
	flen  int16 // the packet's length from base (skb->len counts from data)
	lin   int16 // bytes readable from base: up to skb->tail
	synth int16 // 0, or 0x10000 | the Ethernet type of a synthesized header
	mac   int16
	nh    int16
	tmp   int16
	// vlan is 0, or, where the skb holds an 802.1Q tag out of band
	// (skb->vlan_all, hardware-accelerated tagging), 1<<32 | the tag's 4
	// bytes as the wire has them after the MAC addresses: the filter and
	// capture() see the packet as it is on the wire, tag inserted.
	vlan int16
	vtci int16
	vpre int16
	// tun is 0, or the offset slots of a filter with a tunnel
	// (pcaptunnel.go).
	tun int16
}

// pcap evaluates a compiled filter. A load past the packet's end makes
// the filter false, as libpcap's filter machine returns 0: the loads jump
// to pcapShort, which pushes 0 as the call's value.
func (g *gen) pcap(e *lang.CallExpr) error {
	short, done := g.label("pcap_short"), g.label("pcap_done")
	if err := g.parsePacket(short); err != nil {
		return err
	}
	if err := g.tunnelSlots(g.info.Pcap[e]); err != nil {
		return err
	}
	outer := g.pcapShort
	g.pcapShort = short
	err := g.expr(g.info.Pcap[e])
	g.pcapShort = outer
	if err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	g.emit(
		asm.JNE.Imm(asm.R0, 0, done+"_true"),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(short),
		asm.Ja.Label(done),
		asm.Mov.Imm(asm.R0, 1).WithSymbol(done+"_true"),
	)
	g.mark(done)
	return g.vs.push(asm.R0)
}

// parsePacket finds the link header: skb->head + mac_header where the MAC
// header is set and at least 14 bytes before the network header; else an
// Ethernet header is synthesized 14 bytes before the network header, its
// type from skb->protocol (or the IP version where that is not set yet),
// its addresses zero. A NULL skb jumps to short.
func (g *gen) parsePacket(short string) error {
	if g.pkt == nil {
		g.pkt = &pktSlots{}
		for _, p := range []*int16{&g.pkt.skb, &g.pkt.base, &g.pkt.flen, &g.pkt.lin, &g.pkt.synth, &g.pkt.mac, &g.pkt.nh, &g.pkt.tmp, &g.pkt.vlan, &g.pkt.vtci, &g.pkt.vpre} {
			off, err := g.frame.alloc(8)
			if err != nil {
				return err
			}
			*p = off
		}
	}
	if g.xdpFrame() {
		return g.parseFrame(short)
	}
	sl := *g.pkt
	if err := g.skbPtrOr(short); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	g.emit(asm.StoreMem(asm.RFP, sl.skb, asm.R0, asm.DWord))
	// Read the members into the slots: head into base, data into flen,
	// len into lin, protocol into synth and, last, tail over the skb.
	type member struct {
		slot int16
		name string
		size int
	}
	members := []member{{sl.base, "head", 8}, {sl.flen, "data", 8}, {sl.lin, "len", 4}, {sl.mac, "mac_header", 2}, {sl.nh, "network_header", 2}, {sl.synth, "protocol", 2}}
	vlan := vlanLayout(g.info.SkbType)
	if vlan != nil {
		members = append(members, member{sl.vlan, "vlan_proto", 2}, member{sl.vtci, "vlan_tci", 2})
		if vlan.presentBit >= 0 {
			members = append(members, member{sl.vpre, "vlan_present", 1})
		}
	}
	members = append(members, member{sl.skb, "tail", 4})
	for _, m := range members {
		off, err := skbOffset(g.info.SkbType, m.name)
		if m.name == "vlan_present" {
			off, err = int32(vlan.presentBit/8), nil
		}
		if err != nil {
			return err
		}
		g.emit(asm.LoadMem(asm.R3, asm.RFP, sl.skb, asm.DWord), asm.Add.Imm(asm.R3, off))
		g.emit(zero8(m.slot)...)
		g.probeRead(m.slot, m.size)
	}
	synth, have, common := g.label("pkt_synth"), g.label("pkt_type"), g.label("pkt_common")
	// R6-R8 may hold the caller's values: R0-R5 only. R1 ends as the link
	// header's offset from head.
	g.emit(
		asm.LoadMem(asm.R1, asm.RFP, sl.mac, asm.DWord),
		asm.LoadMem(asm.R2, asm.RFP, sl.nh, asm.DWord),
		asm.JEq.Imm(asm.R1, 0xffff, synth),
		asm.Mov.Reg(asm.R4, asm.R1),
		asm.Add.Imm(asm.R4, 14),
		asm.JLT.Reg(asm.R2, asm.R4, synth),
	)
	g.emit(zero8(sl.synth)...)
	g.emit(
		asm.Ja.Label(common),
		asm.LoadMem(asm.R0, asm.RFP, sl.synth, asm.DWord).WithSymbol(synth),
		asm.HostTo(asm.BE, asm.R0, asm.Half),
		asm.JNE.Imm(asm.R0, 0, have),
		// No skb->protocol yet: the IP version says which.
		asm.LoadMem(asm.R3, asm.RFP, sl.base, asm.DWord),
		asm.Add.Reg(asm.R3, asm.R2),
	)
	g.emit(zero8(sl.tmp)...)
	g.probeRead(sl.tmp, 1)
	g.emit(
		asm.LoadMem(asm.R1, asm.RFP, sl.tmp, asm.DWord),
		asm.RSh.Imm(asm.R1, 4),
		asm.Mov.Imm(asm.R0, 0x86dd),
		asm.JEq.Imm(asm.R1, 6, have),
		asm.Mov.Imm(asm.R0, 0x0800),
		asm.JEq.Imm(asm.R1, 4, have),
		asm.Mov.Imm(asm.R0, 0),
		asm.Or.Imm(asm.R0, 0x10000).WithSymbol(have),
		asm.StoreMem(asm.RFP, sl.synth, asm.R0, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, sl.nh, asm.DWord),
		asm.Add.Imm(asm.R1, -14),
	)
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, sl.base, asm.DWord).WithSymbol(common), // head
		asm.Add.Reg(asm.R0, asm.R1),
		asm.StoreMem(asm.RFP, sl.base, asm.R0, asm.DWord),
		// flen = len + data - base
		asm.LoadMem(asm.R3, asm.RFP, sl.flen, asm.DWord),
		asm.Sub.Reg(asm.R3, asm.R0),
		asm.LoadMem(asm.R4, asm.RFP, sl.lin, asm.DWord),
		asm.Add.Reg(asm.R3, asm.R4),
		asm.StoreMem(asm.RFP, sl.flen, asm.R3, asm.DWord),
		// lin = tail - link offset
		asm.LoadMem(asm.R5, asm.RFP, sl.skb, asm.DWord),
		asm.Sub.Reg(asm.R5, asm.R1),
		asm.StoreMem(asm.RFP, sl.lin, asm.R5, asm.DWord),
	)
	g.vlanTag(vlan)
	return nil
}

// vlanFields says how this kernel's sk_buff marks an out-of-band VLAN
// tag: vlan_all (vlan_proto and vlan_tci) not 0 (6.2 on), or the
// vlan_present bit (before), at presentBit bits from the struct's start.
type vlanFields struct {
	presentBit int
}

// vlanLayout reads it from BTF; nil where the skb has no vlan_tci.
func vlanLayout(skb *btf.Struct) *vlanFields {
	if _, _, ok := check.FindMember(skb, "vlan_tci"); !ok {
		return nil
	}
	if _, _, ok := check.FindMember(skb, "vlan_proto"); !ok {
		return nil
	}
	if m, off, ok := check.FindMember(skb, "vlan_present"); ok && m.BitfieldSize == 1 {
		return &vlanFields{presentBit: int(off)}
	}
	return &vlanFields{presentBit: -1}
}

// vlanTag turns the slots vlan (vlan_proto as read), vtci and vpre into
// the vlan slot's value.
func (g *gen) vlanTag(v *vlanFields) {
	sl := *g.pkt
	none := g.label("vlan_none")
	if v == nil {
		g.emit(zero8(sl.vlan)...)
		return
	}
	if v.presentBit >= 0 {
		g.emit(
			asm.LoadMem(asm.R0, asm.RFP, sl.vpre, asm.DWord),
			asm.RSh.Imm(asm.R0, int32(v.presentBit%8)),
			asm.And.Imm(asm.R0, 1),
			asm.JEq.Imm(asm.R0, 0, none),
		)
	}
	done := g.label("vlan_done")
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, sl.vlan, asm.DWord),
		asm.HostTo(asm.BE, asm.R0, asm.Half),
		asm.LoadMem(asm.R1, asm.RFP, sl.vtci, asm.DWord),
		asm.Mov.Reg(asm.R2, asm.R0),
		asm.Or.Reg(asm.R2, asm.R1),
		asm.JEq.Imm(asm.R2, 0, none),
		asm.LSh.Imm(asm.R0, 16),
		asm.Or.Reg(asm.R0, asm.R1),
		asm.Mov.Imm(asm.R1, 1),
		asm.LSh.Imm(asm.R1, 32),
		asm.Or.Reg(asm.R0, asm.R1),
		asm.StoreMem(asm.RFP, sl.vlan, asm.R0, asm.DWord),
		asm.Ja.Label(done),
	)
	z := zero8(sl.vlan)
	z[0] = z[0].WithSymbol(none)
	g.emit(z...)
	g.mark(done)
}

// pcapLoad pushes size bytes of the packet at the offset on the stack,
// big-endian; past the end it jumps to the filter's short label.
func (g *gen) pcapLoad(e *lang.CallExpr) error {
	if g.pkt == nil || g.pcapShort == "" {
		return unsupported(e, e.Name+" outside a filter")
	}
	size := int32(g.info.Consts[e.Args[1]].Int)
	if err := g.expr(e.Args[0]); err != nil {
		return err
	}
	sl := *g.pkt
	real, done, zero, plain := g.label("ld_real"), g.label("ld_done"), g.label("ld_zero"), g.label("ld_plain")
	g.vs.pop(asm.R2)
	// An out-of-band VLAN tag is at bytes 12 to 15 of the frame the
	// filter sees: later bytes are 4 further in the skb. A load across
	// the tag's edges is past the packet's end.
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, sl.vlan, asm.DWord),
		asm.JEq.Imm(asm.R0, 0, plain),
		asm.JLT.Imm(asm.R2, 16, plain+"_tag"),
		asm.Add.Imm(asm.R2, -4),
		asm.Ja.Label(plain),
		asm.Mov.Reg(asm.R1, asm.R2).WithSymbol(plain+"_tag"),
		asm.Add.Imm(asm.R1, size),
		asm.JLE.Imm(asm.R1, 12, plain),
		asm.JLT.Imm(asm.R2, 12, g.pcapShort),
		asm.JGT.Imm(asm.R1, 16, g.pcapShort),
		asm.Mov.Imm(asm.R3, 16),
		asm.Sub.Reg(asm.R3, asm.R1),
		asm.LSh.Imm(asm.R3, 3),
		asm.LSh.Imm(asm.R0, 32),
		asm.RSh.Imm(asm.R0, 32),
		asm.RSh.Reg(asm.R0, asm.R3),
		asm.LoadImm(asm.R1, int64(uint64(1)<<(8*size)-1), asm.DWord),
		asm.And.Reg(asm.R0, asm.R1),
		asm.Ja.Label(done),
	)
	g.mark(plain)
	g.emit(
		asm.Mov.Reg(asm.R1, asm.R2),
		asm.Add.Imm(asm.R1, size),
		asm.LoadMem(asm.R0, asm.RFP, sl.flen, asm.DWord),
		asm.JSGT.Reg(asm.R1, asm.R0, g.pcapShort),
		asm.LoadMem(asm.R0, asm.RFP, sl.lin, asm.DWord),
		asm.JSGT.Reg(asm.R1, asm.R0, g.pcapShort),
		asm.LoadMem(asm.R0, asm.RFP, sl.synth, asm.DWord),
		asm.JEq.Imm(asm.R0, 0, real),
		asm.JGE.Imm(asm.R2, 14, real),
		// In a synthesized header: only its last two bytes, the type, are
		// not zero; bytes [off, off+size) are type >> 8*(14-off-size).
		asm.JGT.Imm(asm.R1, 14, g.pcapShort),
		asm.Mov.Imm(asm.R3, 14),
		asm.Sub.Reg(asm.R3, asm.R1),
		asm.LSh.Imm(asm.R3, 3),
		asm.JGE.Imm(asm.R3, 16, zero),
		asm.And.Imm(asm.R0, 0xffff),
		asm.RSh.Reg(asm.R0, asm.R3),
		asm.And.Imm(asm.R0, int32(uint32(1)<<(8*size)-1)),
		asm.Ja.Label(done),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(zero),
		asm.Ja.Label(done),
	)
	g.emit(
		asm.LoadMem(asm.R3, asm.RFP, sl.base, asm.DWord).WithSymbol(real),
		asm.Add.Reg(asm.R3, asm.R2),
	)
	g.emit(zero8(sl.tmp)...)
	g.probeRead(sl.tmp, int(size))
	g.emit(asm.LoadMem(asm.R0, asm.RFP, sl.tmp, asm.DWord))
	if size > 1 {
		g.emit(asm.HostTo(asm.BE, asm.R0, sizeOf(int(size))))
	}
	g.mark(done)
	return g.vs.push(asm.R0)
}

// pcapLen pushes the packet's length from its link header.
func (g *gen) pcapLen(e *lang.CallExpr) error {
	if g.pkt == nil || g.pcapShort == "" {
		return unsupported(e, e.Name+" outside a filter")
	}
	// 4 bytes more with an out-of-band VLAN tag.
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, g.pkt.flen, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, g.pkt.vlan, asm.DWord),
		asm.RSh.Imm(asm.R1, 32),
		asm.LSh.Imm(asm.R1, 2),
		asm.Add.Reg(asm.R0, asm.R1),
	)
	return g.vs.push(asm.R0)
}

// pcapOutbound pushes 1 where the packet's link header is not set yet, or
// is in its data (data <= head + mac_header): it is being sent; 0 where a
// receiver has pulled it.
func (g *gen) pcapOutbound(e *lang.CallExpr) error {
	if g.pkt == nil || g.pcapShort == "" {
		return unsupported(e, e.Name+" outside a filter")
	}
	if g.xdpFrame() {
		// An XDP program sees frames as they are received.
		g.emit(asm.Mov.Imm(asm.R0, 0))
		return g.vs.push(asm.R0)
	}
	sl := *g.pkt
	done := g.label("dir_done")
	if err := g.skbPtrOr(g.pcapShort); err != nil {
		return err
	}
	g.vs.pop(asm.R0)
	data, err := skbOffset(g.info.SkbType, "data")
	if err != nil {
		return err
	}
	head, err := skbOffset(g.info.SkbType, "head")
	if err != nil {
		return err
	}
	g.emit(asm.StoreMem(asm.RFP, sl.tmp, asm.R0, asm.DWord), asm.Mov.Reg(asm.R3, asm.R0), asm.Add.Imm(asm.R3, data))
	g.emit(zero8(sl.vtci)...)
	g.probeRead(sl.vtci, 8)
	g.emit(asm.LoadMem(asm.R3, asm.RFP, sl.tmp, asm.DWord), asm.Add.Imm(asm.R3, head))
	g.emit(zero8(sl.tmp)...)
	g.probeRead(sl.tmp, 8)
	g.emit(
		asm.Mov.Imm(asm.R0, 1),
		asm.LoadMem(asm.R1, asm.RFP, sl.mac, asm.DWord),
		asm.JEq.Imm(asm.R1, 0xffff, done),
		asm.LoadMem(asm.R2, asm.RFP, sl.tmp, asm.DWord),
		asm.Add.Reg(asm.R2, asm.R1),
		asm.LoadMem(asm.R3, asm.RFP, sl.vtci, asm.DWord),
		asm.JLE.Reg(asm.R3, asm.R2, done),
		asm.Mov.Imm(asm.R0, 0),
	)
	g.mark(done)
	return g.vs.push(asm.R0)
}
