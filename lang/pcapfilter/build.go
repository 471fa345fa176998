package pcapfilter

import "github.com/skbtrace/skbtrace/lang"

// The functions a compiled filter calls: the checker and the code generator
// know them; the script's lexer cannot produce their names, so only a
// compiled filter uses them.
const (
	// LoadFunc is `pcap.load(offset, size)`: size (1, 2 or 4) bytes of the
	// packet at offset from its link header, big-endian. A load past the
	// packet's end makes the whole filter false, as in tcpdump.
	LoadFunc = "pcap.load"
	// LenFunc is `pcap.len()`: the packet's length from its link header.
	LenFunc = "pcap.len"
	// DirFunc is `pcap.outbound()`: whether the skb's link header is not
	// built yet (a packet of this host on its way out) or not pulled (in
	// the data: being sent); a received packet has had it pulled by
	// eth_type_trans. libpcap reads the direction from its socket.
	DirFunc = "pcap.outbound"
	// OffsetFunc is `pcap.offset(slot)`: an offset a tunnel primitive
	// stored (SlotLink, SlotType, SlotNet), where the inner packet's
	// headers are; libpcap keeps them in its filter machine's registers.
	OffsetFunc = "pcap.offset"
	// SetOffsetFunc is `pcap.setoffset(slot, value)`: stores an offset;
	// its value is 1.
	SetOffsetFunc = "pcap.setoffset"
)

// The offset slots of a filter that has passed vxlan or geneve.
const (
	SlotLink = 0 // the inner link header (Ethernet)
	SlotType = 1 // the inner packet's Ethernet type (Geneve's protocol type where no Ethernet header is inside)
	SlotNet  = 2 // the inner network header
	// Slots is how many there are.
	Slots = 3
)

// NoInner is what the slots hold when a filter starts: an offset past
// any packet's end. A primitive that tests the inner packet where no
// tunnel matched before it (the packet has none: `not geneve and udp`,
// or `udp or geneve and tcp` for a UDP packet) reads there, and the
// filter is false, as where a load is past the packet's end. libpcap
// reads registers no instruction stored then: its filter machine's
// memory as it happens to be, or, in the kernel, it is refused.
const NoInner = 0xffffffff

// The Ethernet types and IP protocols the primitives test.
const (
	etherIP   = 0x0800
	etherARP  = 0x0806
	etherRARP = 0x8035
	etherIPv6 = 0x86dd

	protoFrag6 = 44 // IPv6 fragment header
)

// layer is where the headers a primitive tests are, as the primitives
// before it in the filter's text left it: libpcap moves its offsets for
// every primitive after `vlan`, `vxlan` or `geneve`, whatever and/or
// joins them.
type layer struct {
	// inner: past vxlan or geneve, the offsets are the slots the tunnel
	// primitive stored (pcap.offset); else the outer Ethernet header's.
	inner bool
	// shift is how many bytes of VLAN tags the expression has passed in
	// this layer (`vlan` moves every later type and network offset by 4,
	// as in libpcap).
	shift uint64
}

// builder makes the lang nodes of a filter, every one at the span of the
// primitive being compiled.
type builder struct {
	pos func(off int) lang.Pos
	at  lang.Span
	l   layer
}

func (b *builder) spanOf(off, end int) lang.Span {
	return lang.Span{Start: b.pos(off), End: b.pos(end)}
}

func (b *builder) num(v uint64) lang.Expr { return &lang.IntLit{At: b.at, Value: v} }

func (b *builder) bin(op string, x, y lang.Expr) lang.Expr {
	return &lang.BinaryExpr{At: b.at, Op: op, OpSpan: b.at, X: x, Y: y}
}

func (b *builder) and(x, y lang.Expr) lang.Expr {
	switch {
	case x == nil:
		return y
	case y == nil:
		return x
	}
	return b.bin("&&", x, y)
}

func (b *builder) or(x, y lang.Expr) lang.Expr {
	switch {
	case x == nil:
		return y
	case y == nil:
		return x
	}
	return b.bin("||", x, y)
}

func (b *builder) not(x lang.Expr) lang.Expr { return &lang.UnaryExpr{At: b.at, Op: "!", X: x} }

func (b *builder) eq(x lang.Expr, v uint64) lang.Expr { return b.bin("==", x, b.num(v)) }

// load reads size bytes at the offset off (an expression) from the link header.
func (b *builder) load(off lang.Expr, size int) lang.Expr {
	return &lang.CallExpr{At: b.at, Name: LoadFunc, NameSpan: b.at, Args: []lang.Expr{off, b.num(uint64(size))}}
}

func (b *builder) length() lang.Expr { return &lang.CallExpr{At: b.at, Name: LenFunc, NameSpan: b.at} }

// add is x + y, folded where both are constants.
func (b *builder) add(x, y lang.Expr) lang.Expr {
	lx, okx := x.(*lang.IntLit)
	ly, oky := y.(*lang.IntLit)
	switch {
	case okx && oky:
		return b.num(lx.Value + ly.Value)
	case oky && ly.Value == 0:
		return x
	}
	return b.bin("+", x, y)
}

// slot reads an offset slot; setSlot stores one (its value is 1).
func (b *builder) slot(n int) lang.Expr {
	return &lang.CallExpr{At: b.at, Name: OffsetFunc, NameSpan: b.at, Args: []lang.Expr{b.num(uint64(n))}}
}

func (b *builder) setSlot(n int, v lang.Expr) lang.Expr {
	return &lang.CallExpr{At: b.at, Name: SetOffsetFunc, NameSpan: b.at, Args: []lang.Expr{b.num(uint64(n)), v}}
}

// outerStart are the offsets of the outer Ethernet header, its type and
// its payload.
var outerStart = [Slots]uint64{0, 12, 14}

// base is the offset of a slot's header in the current layer: a constant
// in the outer packet, the slot past a tunnel; VLAN tags passed move the
// type and the network header.
func (b *builder) base(n int) lang.Expr {
	shift := b.l.shift
	if n == SlotLink {
		shift = 0
	}
	if !b.l.inner {
		return b.num(outerStart[n] + shift)
	}
	return b.add(b.slot(n), b.num(shift))
}

// linkOff, typeOff and netOff are the offsets of byte k of the link
// header, of its type and of the network header.
func (b *builder) linkOff(k uint64) lang.Expr { return b.add(b.base(SlotLink), b.num(k)) }
func (b *builder) typeOff(k uint64) lang.Expr { return b.add(b.base(SlotType), b.num(k)) }
func (b *builder) netOff(k uint64) lang.Expr  { return b.add(b.base(SlotNet), b.num(k)) }

// ldLink and ldNet read size bytes at byte k of the link header or of
// the network header.
func (b *builder) ldLink(k uint64, size int) lang.Expr { return b.load(b.linkOff(k), size) }
func (b *builder) ldNet(k uint64, size int) lang.Expr  { return b.load(b.netOff(k), size) }

// etherType tests the Ethernet type (after any VLAN tags passed).
func (b *builder) etherType(v uint64) lang.Expr { return b.eq(b.load(b.typeOff(0), 2), v) }

// linkPresent is true where the layer has a link header: always in the
// outer packet; past a tunnel, where Geneve carries an Ethernet frame
// (its link header is not its network header), as libpcap tests before
// an Ethernet address.
func (b *builder) linkPresent() lang.Expr {
	if !b.l.inner {
		return nil
	}
	return b.bin("!=", b.slot(SlotLink), b.slot(SlotNet))
}

// ipProto is `ip proto p`.
func (b *builder) ipProto(p uint64) lang.Expr {
	return b.and(b.etherType(etherIP), b.eq(b.ldNet(9, 1), p))
}

// ip6Proto is `ip6 proto p`: the next header, or the one after a fragment
// header, as libpcap tests it.
func (b *builder) ip6Proto(p uint64) lang.Expr {
	nh := func() lang.Expr { return b.ldNet(6, 1) }
	return b.and(b.etherType(etherIPv6), b.or(b.eq(nh(), p), b.and(b.eq(nh(), protoFrag6), b.eq(b.ldNet(40, 1), p))))
}

// anyProto is `proto p`: IPv4 or IPv6.
func (b *builder) anyProto(p uint64) lang.Expr { return b.or(b.ipProto(p), b.ip6Proto(p)) }

// firstFrag is true for an IPv4 packet that is not a later fragment.
func (b *builder) firstFrag() lang.Expr {
	return b.eq(b.bin("&", b.ldNet(6, 2), b.num(0x1fff)), 0)
}

// transport is the offset of byte off of an IPv4 packet's transport header.
func (b *builder) transport(off lang.Expr) lang.Expr {
	ihl := b.bin("<<", b.bin("&", b.ldNet(0, 1), b.num(0xf)), b.num(2))
	if lit, ok := off.(*lang.IntLit); ok {
		return b.bin("+", b.netOff(lit.Value), ihl)
	}
	return b.bin("+", b.add(off, b.netOff(0)), ihl)
}

// u32 truncates an arithmetic result to 32 bits, as the filter machine
// computes.
func (b *builder) u32(x lang.Expr) lang.Expr { return b.bin("&", x, b.num(0xffffffff)) }
