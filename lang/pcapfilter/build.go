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
)

// The Ethernet types and IP protocols the primitives test.
const (
	etherIP   = 0x0800
	etherARP  = 0x0806
	etherRARP = 0x8035
	etherIPv6 = 0x86dd

	protoFrag6 = 44 // IPv6 fragment header
)

// builder makes the lang nodes of a filter, every one at the span of the
// primitive being compiled.
type builder struct {
	pos func(off int) lang.Pos
	at  lang.Span
	// shift is how many bytes of VLAN tags the expression has passed
	// (`vlan` moves every later offset by 4, as in libpcap).
	shift uint64
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

// ld reads size bytes at a fixed offset from the link header.
func (b *builder) ld(off uint64, size int) lang.Expr { return b.load(b.num(off), size) }

func (b *builder) length() lang.Expr { return &lang.CallExpr{At: b.at, Name: LenFunc, NameSpan: b.at} }

// nl is the offset of the network header.
func (b *builder) nl() uint64 { return 14 + b.shift }

// etherType tests the Ethernet type (after any VLAN tags passed).
func (b *builder) etherType(v uint64) lang.Expr { return b.eq(b.ld(12+b.shift, 2), v) }

// ipProto is `ip proto p`.
func (b *builder) ipProto(p uint64) lang.Expr {
	return b.and(b.etherType(etherIP), b.eq(b.ld(b.nl()+9, 1), p))
}

// ip6Proto is `ip6 proto p`: the next header, or the one after a fragment
// header, as libpcap tests it.
func (b *builder) ip6Proto(p uint64) lang.Expr {
	nh := func() lang.Expr { return b.ld(b.nl()+6, 1) }
	return b.and(b.etherType(etherIPv6), b.or(b.eq(nh(), p), b.and(b.eq(nh(), protoFrag6), b.eq(b.ld(b.nl()+40, 1), p))))
}

// anyProto is `proto p`: IPv4 or IPv6.
func (b *builder) anyProto(p uint64) lang.Expr { return b.or(b.ipProto(p), b.ip6Proto(p)) }

// firstFrag is true for an IPv4 packet that is not a later fragment.
func (b *builder) firstFrag() lang.Expr {
	return b.eq(b.bin("&", b.ld(b.nl()+6, 2), b.num(0x1fff)), 0)
}

// transport is the offset of byte off of an IPv4 packet's transport header.
func (b *builder) transport(off lang.Expr) lang.Expr {
	ihl := b.bin("<<", b.bin("&", b.ld(b.nl(), 1), b.num(0xf)), b.num(2))
	if lit, ok := off.(*lang.IntLit); ok {
		return b.bin("+", b.num(lit.Value+b.nl()), ihl)
	}
	return b.bin("+", b.bin("+", off, b.num(b.nl())), ihl)
}

// u32 truncates an arithmetic result to 32 bits, as the filter machine
// computes.
func (b *builder) u32(x lang.Expr) lang.Expr { return b.bin("&", x, b.num(0xffffffff)) }
