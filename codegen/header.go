package codegen

import (
	"fmt"
	"slices"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
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

// shinfoOffsets are the offsets of skb->head and skb->end, whose sum is
// the address of the skb's shared info (skb_shinfo).
func shinfoOffsets(skb *btf.Struct) (head, end int32, err error) {
	if head, err = skbOffset(skb, "head"); err != nil {
		return 0, 0, err
	}
	end, err = skbOffset(skb, "end")
	return head, end, err
}

// ipSlots are the frame slots where a parsed IP header's facts live; every
// probe read clobbers R0-R5 and R6-R8 may hold the caller's values.
type ipSlots struct {
	head    int16 // skb->head (kprobes: read with a helper)
	nh      int16 // the network header's address (while parsing, its offset from head)
	version int16 // 4 or 6
	proto   int16 // the L4 protocol
	tmp     int16 // 16 bytes: the IP header's first 10
	// l4 holds the transport header's first l4Bytes bytes, as far as the
	// probe's transport fields reach (none: not read).
	l4      int16
	l4Bytes int
}

// l4Reach is how many bytes of the transport header the probe's fields
// read: one read in parseIP serves them all.
func (g *gen) l4Reach() int {
	n := 0
	for _, node := range []lang.Node{g.probe.Pred, g.probe.Body} {
		if node == nil {
			continue
		}
		lang.Inspect(node, func(n2 lang.Node) bool {
			if id, ok := n2.(*lang.Ident); ok {
				if f := g.info.Fields[id]; f != nil && f.Src.Kind == stdlib.SrcHeader && f.Src.Layer == 4 {
					n = max(n, f.Src.Off4+l4Load(f.Src.Width).Sizeof())
				}
			}
			return true
		})
	}
	return n
}

// l4Load is the load that reads a transport field of width bytes: its own
// size, or 8 bytes masked after.
func l4Load(width int) asm.Size {
	if s := sizeOf(width); s.Sizeof() == width {
		return s
	}
	return asm.DWord
}

// ipPrefix is how many bytes of the IP header parseIP reads: through
// IPv4's protocol (byte 9), which holds IPv6's next header (byte 6) too.
const ipPrefix = 10

// usesKind reports whether n reads a stdlib field of one of these sources
// (the packet's headers, netfilter), or, with names, one of those fields.
func (g *gen) usesKind(n lang.Node, kind stdlib.SourceKind, names ...string) bool {
	found := false
	if n == nil {
		return false
	}
	lang.Inspect(n, func(n lang.Node) bool {
		if id, ok := n.(*lang.Ident); ok {
			if f := g.info.Fields[id]; f != nil && f.Src.Kind == kind && (len(names) == 0 || slices.Contains(names, f.Name)) {
				found = true
			}
		}
		return !found
	})
	return found
}

// usesHeaders reports whether n reads a field of the packet's headers.
func (g *gen) usesHeaders(n lang.Node) bool { return g.usesKind(n, stdlib.SrcHeader) }

// parseIP reads the skb's IP header facts into slots, once per program: the
// caller places it before the predicate or the body, whichever reads a
// header first, so every later read finds the slots set. Where the network
// header is unset or neither IPv4 nor IPv6, version and proto stay 0. The
// transport offset comes from the IP header itself (IHL, or the fixed IPv6
// header), not from skb->transport_header, which is not set yet early on
// the receive path.
func (g *gen) parseIP() error {
	g.ip = &ipSlots{l4Bytes: g.l4Reach()}
	for _, p := range []*int16{&g.ip.head, &g.ip.nh, &g.ip.version, &g.ip.proto} {
		off, err := g.frame.keep(8)
		if err != nil {
			return err
		}
		*p = off
	}
	tmp, err := g.frame.keep(16)
	if err != nil {
		return err
	}
	g.ip.tmp = tmp
	if g.ip.l4Bytes > 0 {
		if g.ip.l4, err = g.frame.keep(g.ip.l4Bytes); err != nil {
			return err
		}
	}
	none := g.label("not_ip")
	sl := *g.ip
	g.emit(zero8(sl.version)...)
	g.emit(zero8(sl.proto)...)
	headOff, err := skbOffset(g.info.SkbType, "head")
	if err != nil {
		return err
	}
	nhOff, err := skbOffset(g.info.SkbType, "network_header")
	if err != nil {
		return err
	}
	// Parsed ahead of the code that reads it, which a NULL check may guard:
	// a NULL skb has no IP header, and ends nothing.
	if err := g.skbPtrOr(none); err != nil {
		return err
	}
	if g.ctx == ctxArgs {
		// A BTF pointer (tp_btf, fentry): the two members load directly.
		g.vs.pop(asm.R0)
		g.emit(
			asm.LoadMem(asm.R1, asm.R0, int16(headOff), asm.DWord),
			asm.LoadMem(asm.R0, asm.R0, int16(nhOff), asm.Half),
		)
	} else {
		g.vs.pop(asm.R3)
		g.emit(asm.StoreMem(asm.RFP, sl.head, asm.R3, asm.DWord)) // the skb, for now
		g.emit(zero8(sl.nh)...)
		g.emit(asm.Add.Imm(asm.R3, nhOff))
		g.probeRead(sl.nh, 2)
		g.emit(asm.LoadMem(asm.R3, asm.RFP, sl.head, asm.DWord), asm.Add.Imm(asm.R3, headOff))
		g.probeRead(sl.head, 8)
		g.emit(asm.LoadMem(asm.R0, asm.RFP, sl.nh, asm.DWord), asm.LoadMem(asm.R1, asm.RFP, sl.head, asm.DWord))
	}
	g.emit(
		asm.JEq.Imm(asm.R0, 0xffff, none),
		// From here on, addresses: each read adds only its offset.
		asm.Add.Reg(asm.R0, asm.R1),
		asm.StoreMem(asm.RFP, sl.nh, asm.R0, asm.DWord),
	)
	// One read for the version, IHL and protocol (a failed read leaves
	// zeroes: version 0, no IP header).
	g.readAt(sl.tmp, sl.nh, 0, ipPrefix)
	v6, set := g.label("ipv6"), g.label("ip_set")
	l4 := sl.l4Bytes > 0
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, sl.tmp, asm.Byte),
		asm.Mov.Reg(asm.R1, asm.R0),
		asm.RSh.Imm(asm.R1, 4),
		asm.JEq.Imm(asm.R1, 6, v6),
		asm.JNE.Imm(asm.R1, 4, none),
		// IPv4: the protocol is byte 9; L4 starts IHL*4 bytes in.
		asm.LoadMem(asm.R2, asm.RFP, sl.tmp+9, asm.Byte),
	)
	if l4 {
		g.emit(asm.And.Imm(asm.R0, 0xf), asm.LSh.Imm(asm.R0, 2))
	}
	g.emit(
		asm.Ja.Label(set),
		// IPv6: next header is byte 6, after the 40-byte header.
		asm.LoadMem(asm.R2, asm.RFP, sl.tmp+6, asm.Byte).WithSymbol(v6),
		asm.Mov.Imm(asm.R0, 40),
	)
	g.ipv6ExtHeaders(sl)
	g.emit(
		asm.StoreMem(asm.RFP, sl.version, asm.R1, asm.DWord).WithSymbol(set),
		asm.StoreMem(asm.RFP, sl.proto, asm.R2, asm.DWord),
	)
	if l4 {
		// The transport header's bytes the fields read, in one read
		// (a failed one leaves zeroes).
		g.emit(
			asm.LoadMem(asm.R3, asm.RFP, sl.nh, asm.DWord),
			asm.Add.Reg(asm.R3, asm.R0),
		)
		g.probeRead(sl.l4, sl.l4Bytes)
	}
	g.mark(none)
	return nil
}

// ipv6Exts bounds the IPv6 extension headers parseIP walks past.
const ipv6Exts = 3

// ipv6ExtHeaders walks past an IPv6 packet's extension headers (hop-by-hop
// options, as MLD's, routing, destination options, a fragment header), up
// to ipv6Exts of them, so that l4proto and the ports are the upper
// protocol's, as tcpdump names it: R2 holds the next header and R0 its
// offset from the network header, on entry and on exit; R1 is 6 on exit.
func (g *gen) ipv6ExtHeaders(sl ipSlots) {
	done := g.label("v6_exts")
	// read puts the extension header's first n bytes in tmp (zeroes where
	// the read fails: next header 0, no length) and its next header in R2.
	read := func(label string, n int) {
		g.emit(
			asm.StoreMem(asm.RFP, sl.tmp+8, asm.R0, asm.DWord).WithSymbol(label),
			zero8(sl.tmp)[0],
			asm.LoadMem(asm.R3, asm.RFP, sl.nh, asm.DWord),
			asm.Add.Reg(asm.R3, asm.R0),
		)
		g.probeRead(sl.tmp, n)
		g.emit(
			asm.LoadMem(asm.R0, asm.RFP, sl.tmp+8, asm.DWord),
			asm.LoadMem(asm.R2, asm.RFP, sl.tmp, asm.Byte),
			asm.Add.Imm(asm.R0, 8),
		)
	}
	for i := 0; i < ipv6Exts; i++ {
		ext, frag, next := g.label("v6_ext"), g.label("v6_frag"), g.label("v6_next")
		g.emit(
			asm.JEq.Imm(asm.R2, 0, ext),
			asm.JEq.Imm(asm.R2, 43, ext),
			asm.JEq.Imm(asm.R2, 60, ext),
			asm.JEq.Imm(asm.R2, 44, frag),
			asm.Ja.Label(done),
		)
		// Hop-by-hop, routing, destination options: 8 bytes and 8 more
		// for each unit of the length (byte 1).
		read(ext, 2)
		g.emit(
			asm.LoadMem(asm.R1, asm.RFP, sl.tmp+1, asm.Byte),
			asm.LSh.Imm(asm.R1, 3),
			asm.Add.Reg(asm.R0, asm.R1),
			asm.Ja.Label(next),
		)
		// A fragment header: 8 bytes.
		read(frag, 1)
		g.mark(next)
	}
	g.mark(done)
	g.emit(asm.Mov.Imm(asm.R1, 6))
}

// header reads an integer field of the IP or transport header; where the
// packet has no such header, or the transport protocol lacks the field, the
// value is 0.
func (g *gen) header(f *stdlib.Field) error {
	done := g.label("hdr_done")
	if g.ip == nil {
		return fmt.Errorf("%s: the IP header was not parsed", f.Name)
	}
	sl := *g.ip
	switch {
	case f.Src.Layer == 3 && f.Name == "l4proto":
		// 0 where there is no IP header.
		g.emit(asm.LoadMem(asm.R0, asm.RFP, sl.proto, asm.DWord))
		return g.vs.push(asm.R0)
	case f.Src.Layer == 3 && f.Name == "ipver":
		g.emit(asm.LoadMem(asm.R0, asm.RFP, sl.version, asm.DWord))
		return g.vs.push(asm.R0)
	case f.Src.Layer == 4:
		// 0 unless the protocol has the field.
		g.emit(asm.LoadMem(asm.R1, asm.RFP, sl.proto, asm.DWord), asm.Mov.Imm(asm.R0, 0))
		switch {
		case f.Src.TCPOnly:
			g.emit(asm.JNE.Imm(asm.R1, 6, done))
		case f.Src.ICMPOnly:
			ok := g.label("icmp")
			g.emit(asm.JEq.Imm(asm.R1, 1, ok), asm.JEq.Imm(asm.R1, 58, ok), asm.Ja.Label(done))
			g.mark(ok)
		default:
			ok := g.label("ports")
			g.emit(asm.JEq.Imm(asm.R1, 6, ok), asm.JEq.Imm(asm.R1, 17, ok), asm.JEq.Imm(asm.R1, 132, ok), asm.Ja.Label(done))
			g.mark(ok)
		}
		// parseIP read the field's bytes (zeroes where the read failed).
		load := l4Load(f.Src.Width)
		g.emit(asm.LoadMem(asm.R0, asm.RFP, sl.l4+int16(f.Src.Off4), load))
		if load.Sizeof() != f.Src.Width {
			shift := int32(64 - 8*f.Src.Width)
			g.emit(asm.LSh.Imm(asm.R0, shift), asm.RSh.Imm(asm.R0, shift))
		}
		if f.Src.BigEndian && f.Src.Width > 1 {
			// A byte swap of the width zero-extends it.
			g.emit(asm.HostTo(asm.BE, asm.R0, sizeOf(f.Src.Width)))
			if f.Type.Size != f.Src.Width || f.Type.Signed {
				g.fit(asm.R0, f.Type)
			}
		}
	default:
		return fmt.Errorf("%s is not compiled yet", f.Name)
	}
	g.mark(done)
	return g.vs.push(asm.R0)
}

// AddrSize is the size of an address value in a record: 16 bytes of
// address (IPv4 in the first 4), then the family (4 or 6, 0 for none), padded.
const AddrSize = 24

// addrFamilyOff is where an address value's family is, after its 16
// bytes of address.
const addrFamilyOff = 16

// addrInto writes an address field (saddr, daddr) at the frame offset at,
// whose address bytes are zeroed; it writes the family's 8 bytes whole.
func (g *gen) addrInto(f *stdlib.Field, at int16) error {
	// No IP header and a finished read both end at done, family 0 or set.
	done := g.label("addr_done")
	if g.ip == nil {
		return fmt.Errorf("%s: the IP header was not parsed", f.Name)
	}
	sl := *g.ip
	// The family is the version (0 without an IP header); one read, of the
	// size and at the offset the version picks.
	read := g.label("addr_read")
	g.emit(
		asm.LoadMem(asm.R0, asm.RFP, sl.version, asm.DWord),
		asm.StoreMem(asm.RFP, at+16, asm.R0, asm.DWord), // and its padding (mayLeave)
		asm.LoadMem(asm.R3, asm.RFP, sl.nh, asm.DWord),
		asm.Add.Imm(asm.R3, int32(f.Src.Off6)),
		asm.Mov.Imm(asm.R2, 16),
		asm.JEq.Imm(asm.R0, 6, read),
		asm.JNE.Imm(asm.R0, 4, done),
		asm.Add.Imm(asm.R3, int32(f.Src.Off4-f.Src.Off6)),
		asm.Mov.Imm(asm.R2, 4),
		asm.Mov.Reg(asm.R1, asm.RFP).WithSymbol(read),
		asm.Add.Imm(asm.R1, int32(at)),
		asm.FnProbeReadKernel.Call(),
	)
	g.mark(done)
	return nil
}

// readAt reads n bytes at *base + off into the slot dst.
func (g *gen) readAt(dst, base int16, off int32, n int) {
	g.emit(asm.LoadMem(asm.R3, asm.RFP, base, asm.DWord))
	if off != 0 {
		g.emit(asm.Add.Imm(asm.R3, off))
	}
	g.probeRead(dst, n)
}

// probeRead reads n bytes from the address in R3 into the slot dst (in
// the traced process's memory in a uprobe).
func (g *gen) probeRead(dst int16, n int) { g.readWith(g.readHelper(asm.FnProbeReadKernel), dst, n) }

// readWith calls a bpf_probe_read_kernel-like helper: n bytes from the
// address in R3 into the slot dst.
func (g *gen) readWith(fn asm.BuiltinFunc, dst int16, n int) {
	g.emit(
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, int32(dst)),
		asm.Mov.Imm(asm.R2, int32(n)),
		fn.Call(),
	)
}
