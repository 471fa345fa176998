package pcaptest

import "encoding/binary"

// vxlan is a VXLAN header (flags, VNI) and the Ethernet frame it carries.
func vxlan(flags byte, vni uint32, inner []byte) []byte {
	h := make([]byte, 8)
	h[0] = flags
	binary.BigEndian.PutUint32(h[4:], vni<<8)
	return append(h, inner...)
}

// geneve is a Geneve header (version, optWords 4-byte words of options,
// protocol type, VNI) and its payload.
func geneve(version byte, optWords int, proto uint16, vni uint32, payload []byte) []byte {
	h := make([]byte, 8+4*optWords)
	h[0] = version<<6 | byte(optWords)
	binary.BigEndian.PutUint16(h[2:], proto)
	binary.BigEndian.PutUint32(h[4:], vni<<8)
	for i := 0; i < optWords; i += 2 {
		// An option of class 0x0103, type 0x80, of the words left.
		n := min(optWords-i, 2)
		o := h[8+4*i:]
		binary.BigEndian.PutUint16(o, 0x0103)
		o[2], o[3] = 0x80, byte(n-1)
		for j := 4; j < 4*n; j++ {
			o[j] = byte(j)
		}
	}
	return append(h, payload...)
}

// udpWith is a UDP header and a payload.
func udpWith(sport, dport uint16, payload []byte) []byte {
	h := make([]byte, 8)
	binary.BigEndian.PutUint16(h[0:], sport)
	binary.BigEndian.PutUint16(h[2:], dport)
	binary.BigEndian.PutUint16(h[4:], uint16(8+len(payload)))
	return append(h, payload...)
}

var (
	innerMacA = []byte{0x02, 0, 0, 0, 0x42, 0x01}
	innerMacB = []byte{0x02, 0, 0, 0, 0x42, 0x02}
)

// tunnelFrames are VXLAN and Geneve packets over IPv4 and IPv6: inner
// UDP, TCP, ICMP, ARP and IPv6, Geneve with options and with an IP packet
// for payload (no Ethernet header), invalid headers, a later fragment, a
// truncated header, a tunnel in a tunnel, and a tunnel in a VLAN.
func tunnelFrames() [][]byte {
	outer4 := func(dport uint16, payload []byte) []byte {
		return frame(macB, macA, nil, 0x0800, ip4("10.201.0.1", "10.201.0.2", 17, 0x4000, 0, udpWith(40000, dport, payload)))
	}
	outer6 := func(dport uint16, payload []byte) []byte {
		return frame(macB, macA, nil, 0x86dd, ip6("fd00:201::1", "fd00:201::2", 17, udpWith(40001, dport, payload)))
	}
	in4 := func(src, dst string, proto byte, l4 []byte) []byte {
		return frame(innerMacB, innerMacA, nil, 0x0800, ip4(src, dst, proto, 0, 0, l4))
	}
	in6 := func(proto byte, l4 []byte) []byte {
		return frame(innerMacB, innerMacA, nil, 0x86dd, ip6("fd00:42::1", "fd00:42::2", proto, l4))
	}
	udp9 := in4("192.168.42.1", "192.168.42.2", 17, udp(40009, 9, 10))
	syn80 := in4("192.168.42.1", "192.168.42.2", 6, tcp(40080, 80, syn, 0))
	ping := in4("192.168.42.1", "192.168.42.2", 1, icmp(8, 0, 42, 1))
	arpReq := frame(bcast, innerMacA, nil, 0x0806, arp(1, innerMacA, "192.168.42.1", make([]byte, 6), "192.168.42.2"))
	gnUDP9 := in4("192.168.43.1", "192.168.43.2", 17, udp(40009, 9, 10))
	return [][]byte{
		outer4(4789, vxlan(0x08, 42, udp9)),
		outer4(4789, vxlan(0x08, 42, syn80)),
		outer4(4789, vxlan(0x08, 7, ping)),
		outer6(4789, vxlan(0x08, 42, in6(17, udp(40053, 5000, 12)))),
		frame(macB, macA, nil, 0x0800, ip4("10.201.0.1", "10.201.0.2", 17, 0, 1, udpWith(40002, 4789, vxlan(0x08, 42, arpReq)))),
		outer4(4789, vxlan(0x0c, 42, udp9)),
		outer4(4789, []byte{0x08, 0, 0, 0}),
		outer4(4789, vxlan(0x08, 42, frame(innerMacB, innerMacA, []uint32{0x8100<<16 | 10}, 0x0800, ip4("192.168.42.1", "192.168.42.2", 17, 0, 0, udp(40010, 9, 4))))),
		frame(macB, macA, []uint32{0x8100<<16 | 10}, 0x0800, ip4("10.201.0.1", "10.201.0.2", 17, 0, 0, udpWith(40003, 4789, vxlan(0x08, 42, syn80)))),
		outer4(6081, geneve(0, 0, 0x6558, 43, gnUDP9)),
		outer4(6081, geneve(0, 2, 0x6558, 43, in4("192.168.43.1", "192.168.43.2", 6, tcp(40080, 80, syn, 0)))),
		outer6(6081, geneve(0, 0, 0x0800, 43, ip4("192.168.43.1", "192.168.43.2", 1, 0, 0, icmp(8, 0, 43, 1)))),
		outer4(6081, geneve(0, 1, 0x86dd, 44, ip6("fd00:43::1", "fd00:43::2", 17, udp(40053, 53, 8)))),
		outer4(6081, geneve(1, 0, 0x6558, 43, gnUDP9)),
		frame(macB, macA, nil, 0x0800, ip4("10.201.0.1", "10.201.0.2", 17, 0x2001, 0, udpWith(40000, 6081, geneve(0, 0, 0x6558, 43, gnUDP9)))),
		outer4(6081, geneve(0, 3, 0x6558, 43, in4("192.168.43.1", "192.168.43.2", 17, udpWith(40004, 6081, geneve(0, 1, 0x6558, 45, gnUDP9))))),
		outer4(6081, geneve(0, 0, 0x6558, 43, arpReq)),
		outer6(6081, geneve(0, 0, 0x6558, 46, in6(6, tcp(40443, 443, syn|ack, 0)))),
		outer4(9, udp9[14:]),
		frame(macB, macA, []uint32{0x8100<<16 | 20}, 0x0800, ip4("10.201.0.1", "10.201.0.2", 17, 0, 0, udpWith(40005, 6081, geneve(0, 0, 0x6558, 43, gnUDP9)))),
		outer4(6081, geneve(0, 0, 0x6558, 43, frame(innerMacB, innerMacA, []uint32{0x8100<<16 | 30}, 0x0800, ip4("192.168.43.1", "192.168.43.2", 17, 0, 0, udp(40030, 9, 6))))),
	}
}

// GeneveForVXLAN returns a copy of frames in which every UDP datagram of
// the outer packet (after any VLAN tags: IPv4 not a later fragment, or
// IPv6 with UDP its next header) to the VXLAN port is one to Geneve's,
// its header a Geneve header of the same VNI that carries an Ethernet
// frame, of version 0 where the VXLAN flags are exactly I (valid) and 1
// where not; datagrams to Geneve's port go to 6082 instead. A vxlan filter
// selects from frames what its geneve twin selects from these (Selects).
func GeneveForVXLAN(frames [][]byte) [][]byte {
	be := binary.BigEndian
	out := make([][]byte, len(frames))
	for i, f := range frames {
		g := append([]byte{}, f...)
		out[i] = g
		off := 12
		for off+4 <= len(g) && (be.Uint16(g[off:]) == 0x8100 || be.Uint16(g[off:]) == 0x88a8 || be.Uint16(g[off:]) == 0x9100) {
			off += 4
		}
		if off+2 > len(g) {
			continue
		}
		nh, uh := off+2, -1
		switch be.Uint16(g[off:]) {
		case 0x0800:
			if nh+20 <= len(g) && g[nh+9] == 17 && be.Uint16(g[nh+6:])&0x1fff == 0 {
				uh = nh + int(g[nh]&0xf)*4
			}
		case 0x86dd:
			if nh+40 <= len(g) && g[nh+6] == 17 {
				uh = nh + 40
			}
		}
		if uh < 0 || uh+4 > len(g) {
			continue
		}
		switch be.Uint16(g[uh+2:]) {
		case 6081:
			be.PutUint16(g[uh+2:], 6082)
		case 4789:
			be.PutUint16(g[uh+2:], 6081)
			h := uh + 8
			if h < len(g) {
				if g[h] == 0x08 {
					g[h] = 0
				} else {
					g[h] = 1 << 6
				}
			}
			if h+4 <= len(g) {
				be.PutUint16(g[h+2:], 0x6558)
			}
		}
	}
	return out
}

// GeneveDatagrams are UDP payloads for Geneve's port, to send where no
// geneve device can be made: from 192.168.43.1 to .2 inside, an Ethernet
// frame of a datagram to port 9 (VNI 43), of a TCP SYN to port 80 (VNI
// 43, 8 bytes of options), of a datagram to port 53 (VNI 43), and an IPv4
// ICMP echo request with no Ethernet header (VNI 44, protocol type IPv4).
func GeneveDatagrams() [][]byte {
	in4 := func(proto byte, l4 []byte) []byte {
		return frame(innerMacB, innerMacA, nil, 0x0800, ip4("192.168.43.1", "192.168.43.2", proto, 0, 0, l4))
	}
	return [][]byte{
		geneve(0, 0, 0x6558, 43, in4(17, udp(40009, 9, 10))),
		geneve(0, 2, 0x6558, 43, in4(6, tcp(40080, 80, syn, 0))),
		geneve(0, 0, 0x6558, 43, in4(17, udp(40053, 53, 12))),
		geneve(0, 0, 0x0800, 44, ip4("192.168.43.1", "192.168.43.2", 1, 0, 0, icmp(8, 0, 44, 1))),
	}
}
