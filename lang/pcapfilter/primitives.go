package pcapfilter

import (
	"net/netip"

	"github.com/skbtrace/skbtrace/lang"
)

// qual is the qualifiers of a primitive: `tcp src port` is proto "tcp",
// dir "src", kind "port". A value after `and`/`or` inherits the last
// primitive's (`host a or b`); valid is false where there is nothing to
// inherit (after `tcp` or a comparison).
type qual struct {
	proto, dir, kind string
	valid            bool
}

// dirTest combines a test of the source and of the destination field by
// the direction qualifier.
func (b *builder) dirTest(dir string, src, dst func() lang.Expr) (lang.Expr, error) {
	switch dir {
	case "src":
		return src(), nil
	case "dst":
		return dst(), nil
	case "", "src or dst":
		return b.or(src(), dst()), nil
	case "src and dst":
		return b.and(src(), dst()), nil
	}
	return nil, errorf("%s is not a direction for this primitive", dir)
}

// word32 tests the 4 bytes at byte k of the network header under a mask.
func (b *builder) word32(k uint64, v, mask uint32) lang.Expr {
	x := b.ldNet(k, 4)
	if mask != 0xffffffff {
		x = b.bin("&", x, b.num(uint64(mask)))
	}
	return b.eq(x, uint64(v&mask))
}

// net4 tests an IPv4 address or network in the IP header and, unless the
// protocol says otherwise, in ARP and RARP.
func (b *builder) net4(q qual, addr, mask uint32) (lang.Expr, error) {
	ip := func() (lang.Expr, error) {
		t, err := b.dirTest(q.dir, func() lang.Expr { return b.word32(12, addr, mask) }, func() lang.Expr { return b.word32(16, addr, mask) })
		return b.and(b.etherType(etherIP), t), err
	}
	arp := func(types ...uint64) (lang.Expr, error) {
		var is lang.Expr
		for _, t := range types {
			is = b.or(is, b.etherType(t))
		}
		t, err := b.dirTest(q.dir, func() lang.Expr { return b.word32(14, addr, mask) }, func() lang.Expr { return b.word32(24, addr, mask) })
		return b.and(is, t), err
	}
	switch q.proto {
	case "ip":
		return ip()
	case "arp":
		return arp(etherARP)
	case "rarp":
		return arp(etherRARP)
	case "":
		x, err := ip()
		if err != nil {
			return nil, err
		}
		y, err := arp(etherARP, etherRARP)
		return b.or(x, y), err
	}
	return nil, errorf("'%s' modifier applied to an IPv4 %s", q.proto, kindName(q.kind))
}

// net6 tests an IPv6 address or network in the IPv6 header.
func (b *builder) net6(q qual, p netip.Prefix) (lang.Expr, error) {
	if q.proto != "" && q.proto != "ip6" {
		return nil, errorf("'%s' modifier applied to an IPv6 %s", q.proto, kindName(q.kind))
	}
	a := p.Addr().As16()
	bits := p.Bits()
	at := func(base uint64) func() lang.Expr {
		return func() lang.Expr {
			var x lang.Expr
			for w := 0; w < 4; w++ {
				n := bits - 32*w
				if n <= 0 {
					break
				}
				mask := uint32(0xffffffff)
				if n < 32 {
					mask = ^uint32(0) << (32 - n)
				}
				v := uint32(a[4*w])<<24 | uint32(a[4*w+1])<<16 | uint32(a[4*w+2])<<8 | uint32(a[4*w+3])
				x = b.and(x, b.word32(base+uint64(4*w), v, mask))
			}
			return x
		}
	}
	t, err := b.dirTest(q.dir, at(8), at(24))
	if t == nil && err == nil {
		// ::/0 matches every IPv6 packet.
		return b.etherType(etherIPv6), nil
	}
	return b.and(b.etherType(etherIPv6), t), err
}

// etherHost tests a MAC address: the source is at 6, the destination at 0
// (past a tunnel, where the inner packet has an Ethernet header).
func (b *builder) etherHost(q qual, mac [6]byte) (lang.Expr, error) {
	at := func(off uint64) func() lang.Expr {
		return func() lang.Expr {
			lo := uint64(mac[2])<<24 | uint64(mac[3])<<16 | uint64(mac[4])<<8 | uint64(mac[5])
			return b.and(b.eq(b.ldLink(off+2, 4), lo), b.eq(b.ldLink(off, 2), uint64(mac[0])<<8|uint64(mac[1])))
		}
	}
	x, err := b.dirTest(q.dir, at(6), at(0))
	return b.and(b.linkPresent(), x), err
}

// portProtos are the transport protocols a port primitive applies to.
func portProtos(proto string) ([]uint64, error) {
	switch proto {
	case "", "ip", "ip6":
		return []uint64{132, 6, 17}, nil
	case "tcp":
		return []uint64{6}, nil
	case "udp":
		return []uint64{17}, nil
	case "sctp":
		return []uint64{132}, nil
	}
	return nil, errorf("'%s' modifier applied to a port", proto)
}

// ports tests the transport ports with cmp (a port's value in, a test out),
// in IPv6 (next header directly the protocol) and in IPv4 (first fragments).
func (b *builder) ports(q qual, cmp func(lang.Expr) lang.Expr) (lang.Expr, error) {
	protos, err := portProtos(q.proto)
	if err != nil {
		return nil, err
	}
	var v6, v4 lang.Expr
	if q.proto != "ip" {
		if v6, err = b.ports6(protos, q.dir, cmp); err != nil {
			return nil, err
		}
	}
	if q.proto != "ip6" {
		if v4, err = b.ports4(protos, q.dir, cmp); err != nil {
			return nil, err
		}
	}
	return b.or(v6, v4), nil
}

// anyProtoAt tests the byte at k of the network header for any of protos.
func (b *builder) anyProtoAt(k uint64, protos []uint64) lang.Expr {
	var x lang.Expr
	for _, p := range protos {
		x = b.or(x, b.eq(b.ldNet(k, 1), p))
	}
	return x
}

// ports6 tests the ports of an IPv6 packet whose next header is one of
// protos (directly: libpcap does not look past extension headers here).
func (b *builder) ports6(protos []uint64, dir string, cmp func(lang.Expr) lang.Expr) (lang.Expr, error) {
	t, err := b.dirTest(dir, func() lang.Expr { return cmp(b.ldNet(40, 2)) }, func() lang.Expr { return cmp(b.ldNet(42, 2)) })
	if err != nil {
		return nil, err
	}
	return b.and(b.etherType(etherIPv6), b.and(b.anyProtoAt(6, protos), t)), nil
}

// ports4 tests the ports of an IPv4 packet of one of protos that is not a
// later fragment.
func (b *builder) ports4(protos []uint64, dir string, cmp func(lang.Expr) lang.Expr) (lang.Expr, error) {
	t, err := b.dirTest(dir, func() lang.Expr { return cmp(b.load(b.transport(b.num(0)), 2)) }, func() lang.Expr { return cmp(b.load(b.transport(b.num(2)), 2)) })
	if err != nil {
		return nil, err
	}
	return b.and(b.etherType(etherIP), b.and(b.anyProtoAt(9, protos), b.and(b.firstFrag(), t))), nil
}

// protoAbbrev is a protocol named alone: `tcp`, `ip6`, `arp`...
func (b *builder) protoAbbrev(name string) (lang.Expr, error) {
	switch name {
	case "ip":
		return b.etherType(etherIP), nil
	case "ip6":
		return b.etherType(etherIPv6), nil
	case "arp":
		return b.etherType(etherARP), nil
	case "rarp":
		return b.etherType(etherRARP), nil
	case "icmp":
		return b.ipProto(1), nil
	case "igmp":
		return b.ipProto(2), nil
	case "icmp6":
		return b.ip6Proto(58), nil
	case "tcp", "udp", "sctp":
		return b.anyProto(ipProtos[name]), nil
	case "ether":
		return nil, errorf("ether needs host, src, dst, proto, broadcast or multicast after it")
	}
	return nil, errorf("%s is not supported", name)
}

// protoNum is `[ip|ip6|ether] proto N`.
func (b *builder) protoNum(proto string, n uint64) (lang.Expr, error) {
	switch proto {
	case "":
		return b.anyProto(n), nil
	case "ip":
		return b.ipProto(n), nil
	case "ip6":
		return b.ip6Proto(n), nil
	case "ether":
		return b.etherType(n), nil
	}
	return nil, errorf("'%s' modifier applied to proto", proto)
}

// cast is `[ether|ip|ip6] broadcast` or `multicast`.
func (b *builder) cast(proto, which string) (lang.Expr, error) {
	switch {
	case (proto == "" || proto == "ether") && which == "broadcast":
		return b.etherHost(qual{dir: "dst"}, [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	case (proto == "" || proto == "ether") && which == "multicast":
		return b.and(b.linkPresent(), b.bin("!=", b.bin("&", b.ldLink(0, 1), b.num(1)), b.num(0))), nil
	case proto == "ip" && which == "multicast":
		return b.and(b.etherType(etherIP), b.bin(">=", b.ldNet(16, 1), b.num(224))), nil
	case proto == "ip6" && which == "multicast":
		return b.and(b.etherType(etherIPv6), b.eq(b.ldNet(24, 1), 255)), nil
	case proto == "ip" && which == "broadcast":
		// As tcpdump -r, whose netmask is 0: the all-zeros and all-ones
		// destinations (a trace has no capture interface's netmask).
		dst := func() lang.Expr { return b.ldNet(16, 4) }
		return b.and(b.etherType(etherIP), b.or(b.eq(dst(), 0), b.eq(dst(), 0xffffffff))), nil
	}
	return nil, errorf("%s %s is not supported", proto, which)
}

// vlan is `vlan [id]`; every later offset moves past the tag.
func (b *builder) vlan(id *uint64) lang.Expr {
	x := b.or(b.or(b.etherType(0x8100), b.etherType(0x88a8)), b.etherType(0x9100))
	if id != nil {
		x = b.and(x, b.eq(b.bin("&", b.ldNet(0, 2), b.num(0xfff)), *id))
	}
	b.l.shift += 4
	return x
}

func kindName(k string) string {
	if k == "" {
		return "host"
	}
	return k
}

// packetOutgoing is PACKET_OUTGOING, skb->pkt_type of a packet sent.
const packetOutgoing = 4

// direction is `inbound` or `outbound`: whether the packet is received or
// sent at this hop: pkt_type says so, or, as it mostly does not (a packet
// being sent is PACKET_HOST but in the copy taps get), DirFunc.
func (b *builder) direction(out bool) lang.Expr {
	x := b.or(b.eq(&lang.Ident{At: b.at, Name: "pkt_type"}, packetOutgoing), &lang.CallExpr{At: b.at, Name: DirFunc, NameSpan: b.at})
	if out {
		return x
	}
	return b.not(x)
}

// ifname is `ifname NAME` (or `on NAME`): the skb's device is NAME.
func (b *builder) ifname(name string) lang.Expr {
	return b.bin("==", &lang.Ident{At: b.at, Name: "dev"}, &lang.StrLit{At: b.at, Value: name})
}
