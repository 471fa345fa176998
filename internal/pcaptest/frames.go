// Package pcaptest builds the varied traffic and the filter corpus that
// skbtrace's tcpdump-equivalence tests share: Ethernet frames of IPv4,
// IPv6, TCP with its flags, UDP, ICMP, ARP, VLAN and fragments, and a
// classic pcap file of them for `tcpdump -r`.
package pcaptest

import (
	"encoding/binary"
	"net/netip"
)

var (
	macA  = []byte{0x02, 0, 0, 0, 0, 0x01}
	macB  = []byte{0x02, 0, 0, 0, 0, 0x02}
	bcast = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
)

// frame is an Ethernet header (with VLAN tags) and a payload.
func frame(dst, src []byte, vlans []uint32, etherType uint16, payload []byte) []byte {
	b := append(append([]byte{}, dst...), src...)
	for _, v := range vlans {
		b = binary.BigEndian.AppendUint16(b, uint16(v>>16))
		b = binary.BigEndian.AppendUint16(b, uint16(v))
	}
	b = binary.BigEndian.AppendUint16(b, etherType)
	return append(b, payload...)
}

// ip4 is an IPv4 header (with optWords 4-byte words of options) and payload.
func ip4(src, dst string, proto byte, fragOff uint16, optWords int, payload []byte) []byte {
	h := make([]byte, 20+4*optWords)
	h[0] = 0x40 | byte(5+optWords)
	binary.BigEndian.PutUint16(h[2:], uint16(len(h)+len(payload)))
	binary.BigEndian.PutUint16(h[4:], 0x1234)
	binary.BigEndian.PutUint16(h[6:], fragOff)
	h[8], h[9] = 64, proto
	s, d := netip.MustParseAddr(src).As4(), netip.MustParseAddr(dst).As4()
	copy(h[12:], s[:])
	copy(h[16:], d[:])
	for i := 20; i < len(h); i++ {
		h[i] = 1 // NOP options
	}
	var sum uint32
	for i := 0; i < len(h); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	binary.BigEndian.PutUint16(h[10:], ^uint16(sum))
	return append(h, payload...)
}

// ip6 is an IPv6 header and payload.
func ip6(src, dst string, next byte, payload []byte) []byte {
	h := make([]byte, 40)
	h[0] = 0x60
	binary.BigEndian.PutUint16(h[4:], uint16(len(payload)))
	h[6], h[7] = next, 64
	s, d := netip.MustParseAddr(src).As16(), netip.MustParseAddr(dst).As16()
	copy(h[8:], s[:])
	copy(h[24:], d[:])
	return append(h, payload...)
}

// tcp is a TCP header with flags and n bytes of payload.
func tcp(sport, dport uint16, flags byte, n int) []byte {
	h := make([]byte, 20+n)
	binary.BigEndian.PutUint16(h[0:], sport)
	binary.BigEndian.PutUint16(h[2:], dport)
	binary.BigEndian.PutUint32(h[4:], 1)
	if flags&0x10 != 0 {
		binary.BigEndian.PutUint32(h[8:], 1)
	}
	h[12], h[13] = 5<<4, flags
	binary.BigEndian.PutUint16(h[14:], 502)
	for i := 20; i < len(h); i++ {
		h[i] = byte('a' + i%26)
	}
	return h
}

// udp is a UDP header and n bytes of payload.
func udp(sport, dport uint16, n int) []byte {
	h := make([]byte, 8+n)
	binary.BigEndian.PutUint16(h[0:], sport)
	binary.BigEndian.PutUint16(h[2:], dport)
	binary.BigEndian.PutUint16(h[4:], uint16(8+n))
	for i := 8; i < len(h); i++ {
		h[i] = byte('0' + i%10)
	}
	return h
}

// icmp is an ICMP (or ICMPv6) message of a type and code, id and seq.
func icmp(typ, code byte, id, seq uint16) []byte {
	h := make([]byte, 8+8)
	h[0], h[1] = typ, code
	binary.BigEndian.PutUint16(h[4:], id)
	binary.BigEndian.PutUint16(h[6:], seq)
	return h
}

// arp is an Ethernet/IPv4 ARP message: op 1 request, 2 reply.
func arp(op uint16, sha []byte, spa string, tha []byte, tpa string) []byte {
	h := []byte{0, 1, 8, 0, 6, 4, 0, byte(op)}
	s, t := netip.MustParseAddr(spa).As4(), netip.MustParseAddr(tpa).As4()
	h = append(append(h, sha...), s[:]...)
	return append(append(h, tha...), t[:]...)
}

// frag6 is an IPv6 fragment header before a payload of protocol next.
func frag6(next byte, payload []byte) []byte {
	return append([]byte{next, 0, 0, 1, 0, 0, 0, 42}, payload...)
}

// TCP flags.
const (
	fin = 0x01
	syn = 0x02
	rst = 0x04
	psh = 0x08
	ack = 0x10
	urg = 0x20
	ece = 0x40
	cwr = 0x80
)

// Frames returns the test traffic: every frame a different case, the
// tunnels' last.
func Frames() [][]byte {
	e4 := func(p []byte) []byte { return frame(macB, macA, nil, 0x0800, p) }
	e6 := func(p []byte) []byte { return frame(macB, macA, nil, 0x86dd, p) }
	return append([][]byte{
		e4(ip4("10.0.0.1", "10.0.0.2", 6, 0, 0, tcp(40000, 80, syn, 0))),
		frame(macA, macB, nil, 0x0800, ip4("10.0.0.2", "10.0.0.1", 6, 0, 0, tcp(80, 40000, syn|ack, 0))),
		e4(ip4("10.0.0.1", "10.0.0.2", 6, 0x4000, 0, tcp(40000, 80, psh|ack, 100))),
		e4(ip4("10.0.0.1", "10.0.0.2", 6, 0x4000, 0, tcp(40000, 80, fin|ack, 0))),
		e4(ip4("10.0.0.1", "10.0.0.2", 6, 0, 0, tcp(40001, 443, rst, 0))),
		e4(ip4("192.168.1.1", "10.0.0.2", 6, 0, 0, tcp(50000, 22, syn|ece|cwr, 0))),
		e4(ip4("10.0.0.1", "10.0.0.2", 17, 0, 0, udp(5353, 53, 5))),
		e4(ip4("10.1.2.3", "10.0.0.2", 17, 0, 0, udp(1234, 6000, 30))),
		e4(ip4("10.0.0.1", "10.0.0.2", 1, 0, 0, icmp(8, 0, 9, 1))),
		frame(macA, macB, nil, 0x0800, ip4("10.0.0.2", "10.0.0.1", 1, 0, 0, icmp(0, 0, 9, 1))),
		e4(ip4("10.0.0.2", "10.0.0.1", 1, 0, 0, icmp(3, 3, 0, 0))),
		e4(ip4("10.0.0.1", "10.0.0.2", 6, 0, 1, tcp(40002, 80, ack|urg, 10))),
		e4(ip4("10.0.0.1", "10.0.0.2", 17, 0x2000, 0, udp(5353, 53, 64))),
		e4(ip4("10.0.0.1", "10.0.0.2", 17, 185, 0, udp(53, 53, 20))),
		frame([]byte{0x01, 0, 0x5e, 0, 0, 5}, macA, nil, 0x0800, ip4("10.0.0.1", "224.0.0.5", 17, 0, 0, udp(520, 520, 24))),
		frame([]byte{0x01, 0, 0x5e, 0, 0, 1}, macA, nil, 0x0800, ip4("10.0.0.1", "224.0.0.1", 2, 0, 0, []byte{0x11, 0x64, 0, 0, 0, 0, 0, 0})),
		e6(ip6("fd00::1", "fd00::2", 6, tcp(40000, 80, syn, 0))),
		frame(macA, macB, nil, 0x86dd, ip6("fd00::2", "fd00::1", 17, udp(53, 5353, 12))),
		e6(ip6("fd00::1", "fd00::2", 58, icmp(128, 0, 7, 2))),
		e6(ip6("fd00::1", "fd00::2", 44, frag6(17, udp(4000, 53, 16)))),
		frame([]byte{0x33, 0x33, 0, 0, 0, 1}, macA, nil, 0x86dd, ip6("fe80::1", "ff02::1", 58, icmp(135, 0, 0, 0))),
		frame(bcast, macA, nil, 0x0806, arp(1, macA, "10.0.0.1", make([]byte, 6), "10.0.0.2")),
		frame(macA, macB, nil, 0x0806, arp(2, macB, "10.0.0.2", macA, "10.0.0.1")),
		frame(macB, macA, []uint32{0x8100<<16 | 10}, 0x0800, ip4("10.0.0.1", "10.0.0.2", 17, 0, 0, udp(5000, 53, 8))),
		frame(macB, macA, []uint32{0x8100<<16 | 20}, 0x0800, ip4("10.0.0.1", "10.0.0.2", 6, 0, 0, tcp(40003, 80, syn, 0))),
		frame(macB, macA, []uint32{0x8100<<16 | 10}, 0x86dd, ip6("fd00::1", "fd00::2", 58, icmp(129, 0, 7, 2))),
		frame(macB, macA, []uint32{0x88a8<<16 | 100, 0x8100<<16 | 200}, 0x0800, ip4("10.0.0.1", "10.0.0.2", 17, 0, 0, udp(5001, 53, 8))),
		e4(ip4("10.0.0.1", "10.0.0.2", 47, 0, 0, []byte{0, 0, 0x08, 0, 0x45, 0, 0, 20})),
		e4(ip4("10.0.0.1", "10.0.0.2", 132, 0, 0, udp(80, 80, 4))),
		e4(ip4("10.0.0.1", "10.0.0.2", 6, 0x4000, 0, tcp(40000, 80, psh|ack, 1400))),
		e4(ip4("10.0.0.1", "10.0.0.3", 17, 0, 0, udp(80, 80, 1))),
		e4(ip4("10.0.0.255", "10.0.0.2", 17, 0, 0, udp(138, 138, 40))),
		frame(bcast, macA, nil, 0x0800, ip4("0.0.0.0", "255.255.255.255", 17, 0, 0, udp(68, 67, 32))),
		frame(bcast, macA, nil, 0x0800, ip4("10.0.0.1", "10.0.0.255", 17, 0, 0, udp(138, 138, 12))),
		frame(macB, macA, nil, 0x0800, ip4("10.0.0.1", "0.0.0.0", 1, 0, 0, icmp(8, 0, 3, 1))),
	}, tunnelFrames()...)
}
