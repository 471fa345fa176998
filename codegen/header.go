package codegen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/stdlib"
)

// skbOffset is the byte offset of a member of struct sk_buff.
func skbOffset(skb *btf.Struct, name string) (int32, error) {
	_, off, ok := check.FindMember(skb, name)
	if !ok {
		return 0, fmt.Errorf("this kernel's struct sk_buff has no %s", name)
	}
	return int32(off / 8), nil
}

// header reads a field of the packet's IP or transport header. The offsets
// come from the IP header itself (IHL, or the fixed IPv6 header), not from
// skb->transport_header, which is not set yet early on the receive path. Where
// the network header is unset or not IPv4/IPv6, or the transport protocol does
// not have the field, the value is 0.
//
// Intermediate values live in frame slots, since every probe read clobbers
// R0-R5 and R6-R8 may hold the caller's values.
func (g *gen) header(f *stdlib.Field) error {
	headOff, err := skbOffset(g.info.SkbType, "head")
	if err != nil {
		return err
	}
	nhOff, err := skbOffset(g.info.SkbType, "network_header")
	if err != nil {
		return err
	}
	head, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	nh, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	l4, err := g.frame.alloc(8) // offset of the L4 header from head
	if err != nil {
		return err
	}
	proto, err := g.frame.alloc(8)
	if err != nil {
		return err
	}
	zero, done := g.label("hdr_zero"), g.label("hdr_done")
	if err := g.skbPtr(); err != nil {
		return err
	}
	g.vs.pop(asm.R3)
	g.emit(asm.StoreMem(asm.RFP, head, asm.R3, asm.DWord)) // skb, for now
	g.emit(zero8(nh)...)
	g.emit(asm.Add.Imm(asm.R3, nhOff))
	g.probeRead(nh, 2)
	g.emit(asm.LoadMem(asm.R3, asm.RFP, head, asm.DWord), asm.Add.Imm(asm.R3, headOff))
	g.probeRead(head, 8)
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, nh, asm.DWord),
		asm.JEq.Imm(asm.R0, 0xffff, zero),
	)
	// The first byte of the IP header: version and IHL.
	g.emit(zero8(proto)...)
	g.readAt(proto, head, nh, 0, 1)
	v6, l4done := g.label("ipv6"), g.label("l4_done")
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, proto, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.R0),
		asm.RSh.Imm(asm.R1, 4),
		asm.JEq.Imm(asm.R1, 6, v6),
		asm.JNE.Imm(asm.R1, 4, zero),
		// IPv4: L4 starts IHL*4 bytes in; the protocol is byte 9.
		asm.And.Imm(asm.R0, 0xf),
		asm.LSh.Imm(asm.R0, 2),
		asm.LoadMem(asm.R1, asm.RFP, nh, asm.DWord),
		asm.Add.Reg(asm.R0, asm.R1),
		asm.StoreMem(asm.RFP, l4, asm.R0, asm.DWord),
	)
	g.emit(zero8(proto)...)
	g.readAt(proto, head, nh, 9, 1)
	g.emit(asm.Ja.Label(l4done))
	// IPv6: a fixed 40-byte header; next header is byte 6.
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, nh, asm.DWord).WithSymbol(v6),
		asm.Add.Imm(asm.R0, 40),
		asm.StoreMem(asm.RFP, l4, asm.R0, asm.DWord),
	)
	g.emit(zero8(proto)...)
	g.readAt(proto, head, nh, 6, 1)
	g.mark(l4done)
	g.emit(asm.LoadMem(asm.R0, asm.RFP, proto, asm.DWord))
	switch {
	case f.Src.Layer == 3 && f.Name == "l4proto":
		g.emit(asm.Ja.Label(done))
	case f.Src.Layer == 4:
		if f.Src.TCPOnly {
			g.emit(asm.JNE.Imm(asm.R0, 6, zero))
		} else {
			ok := g.label("ports")
			g.emit(asm.JEq.Imm(asm.R0, 6, ok), asm.JEq.Imm(asm.R0, 17, ok), asm.JEq.Imm(asm.R0, 132, ok), asm.Ja.Label(zero))
			g.mark(ok)
		}
		g.emit(zero8(proto)...)
		g.readAt(proto, head, l4, int32(f.Src.Off4), f.Src.Width)
		g.emit(asm.LoadMem(asm.R0, asm.RFP, proto, asm.DWord))
		if f.Src.BigEndian && f.Src.Width > 1 {
			g.emit(asm.HostTo(asm.BE, asm.R0, sizeOf(f.Src.Width)))
			g.fit(asm.R0, f.Type)
		}
		g.emit(asm.Ja.Label(done))
	default:
		return fmt.Errorf("%s is not compiled yet", f.Name)
	}
	g.emit(asm.Mov.Imm(asm.R0, 0).WithSymbol(zero))
	g.mark(done)
	return g.vs.push(asm.R0)
}

// readAt reads n bytes at *head + *base + off into the slot dst.
func (g *gen) readAt(dst, head, base int16, off int32, n int) {
	g.emit(
		asm.LoadMem(asm.R3, asm.RFP, head, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, base, asm.DWord),
		asm.Add.Reg(asm.R3, asm.R1),
		asm.Add.Imm(asm.R3, off),
	)
	g.probeRead(dst, n)
}

// probeRead reads n bytes from the address in R3 into the slot dst.
func (g *gen) probeRead(dst int16, n int) {
	g.emit(
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, int32(dst)),
		asm.Mov.Imm(asm.R2, int32(n)),
		asm.FnProbeReadKernel.Call(),
	)
}
