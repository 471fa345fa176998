package output

import (
	"encoding/binary"
	"net/netip"
	"strconv"

	"github.com/skbtrace/skbtrace/codegen"
)

// appendPacket appends a pkt value as tcpdump -nn -S prints the packet
// (without its time): `IP 10.0.0.1.40000 > 10.0.0.2.80: Flags [S], seq 1,
// win 502, length 0`. VLAN tags are skipped, as tcpdump does without -e;
// a VXLAN or Geneve packet is followed by the packet it carries
// (decode_tunnel.go).
func appendPacket(dst, raw []byte) []byte {
	le := binary.LittleEndian
	n := min(int(le.Uint32(raw[codegen.PacketLen:])), codegen.PacketBytes)
	var frame [codegen.PacketBytes]byte
	b := frame[:n]
	copy(b, raw[codegen.PacketData:])
	if synth := le.Uint32(raw[codegen.PacketSynth:]); synth != 0 && n >= 14 {
		clear(b[:12])
		binary.BigEndian.PutUint16(b[12:], uint16(synth))
	}
	return appendEther(dst, b)
}

// appendEther appends an Ethernet frame's decode: its payload's, VLAN
// tags skipped.
func appendEther(dst, b []byte) []byte {
	n := len(b)
	if n < 14 {
		return append(dst, "[|ether]"...)
	}
	typ, off := binary.BigEndian.Uint16(b[12:]), 14
	for (typ == 0x8100 || typ == 0x88a8) && off+4 <= n {
		typ, off = binary.BigEndian.Uint16(b[off+2:]), off+4
	}
	if d, ok := appendEtherType(dst, typ, b[off:]); ok {
		return d
	}
	dst = append(dst, "ethertype 0x"...)
	return strconv.AppendUint(dst, uint64(typ), 16)
}

// appendEtherType appends the decode of a packet of an Ethernet type, if
// it is one the decode knows.
func appendEtherType(dst []byte, typ uint16, b []byte) ([]byte, bool) {
	switch typ {
	case 0x0800:
		return appendIPv4(dst, b), true
	case 0x86dd:
		return appendIPv6(dst, b), true
	case 0x0806:
		return appendARP(dst, b), true
	}
	return dst, false
}

func appendIPv4(dst, b []byte) []byte {
	if len(b) < 20 {
		return append(dst, "IP [|ip]"...)
	}
	hl := int(b[0]&0xf) * 4
	total := int(binary.BigEndian.Uint16(b[2:]))
	src, dstIP := netip.AddrFrom4([4]byte(b[12:16])), netip.AddrFrom4([4]byte(b[16:20]))
	frag := binary.BigEndian.Uint16(b[6:]) & 0x1fff
	payload := total - hl
	l4 := b[min(hl, len(b)):]
	if frag != 0 {
		// A later fragment has no transport header.
		dst = append(append(append(dst, "IP "...), src.String()...), " > "...)
		dst = append(append(dst, dstIP.String()...), ": ip-proto-"...)
		return strconv.AppendUint(dst, uint64(b[9]), 10)
	}
	return appendL4(dst, "IP ", src, dstIP, b[9], l4, payload)
}

func appendIPv6(dst, b []byte) []byte {
	if len(b) < 40 {
		return append(dst, "IP6 [|ip6]"...)
	}
	src, dstIP := netip.AddrFrom16([16]byte(b[8:24])), netip.AddrFrom16([16]byte(b[24:40]))
	return appendL4(dst, "IP6 ", src, dstIP, b[6], b[40:], int(binary.BigEndian.Uint16(b[4:])))
}

// appendL4 appends the addresses and the transport protocol's summary;
// n is the transport header and payload's length by the IP header.
func appendL4(dst []byte, ip string, src, dstIP netip.Addr, proto byte, b []byte, n int) []byte {
	dst = append(dst, ip...)
	be := binary.BigEndian
	ports := func(dst []byte) []byte {
		dst = src.AppendTo(dst)
		dst = strconv.AppendUint(append(dst, '.'), uint64(be.Uint16(b)), 10)
		dst = dstIP.AppendTo(append(dst, " > "...))
		return append(strconv.AppendUint(append(dst, '.'), uint64(be.Uint16(b[2:])), 10), ": "...)
	}
	addrs := func(dst []byte) []byte {
		return append(dstIP.AppendTo(append(src.AppendTo(dst), " > "...)), ": "...)
	}
	switch {
	case proto == 6 && len(b) >= 20:
		dst = ports(dst)
		return appendTCP(dst, b, n)
	case proto == 17 && len(b) >= 8:
		dst = ports(dst)
		if t, ok := udpTunnel(be.Uint16(b), be.Uint16(b[2:])); ok {
			return t(dst, b[8:], int(be.Uint16(b[4:]))-8)
		}
		dst = append(dst, "UDP, length "...)
		return strconv.AppendInt(dst, int64(be.Uint16(b[4:]))-8, 10)
	case proto == 1 && len(b) >= 8:
		dst = append(addrs(dst), "ICMP "...)
		switch b[0] {
		case 8, 0:
			dst = appendEcho(dst, b, b[0] == 8)
		default:
			dst = strconv.AppendUint(append(dst, "type "...), uint64(b[0]), 10)
			dst = strconv.AppendUint(append(dst, " code "...), uint64(b[1]), 10)
		}
		return strconv.AppendInt(append(dst, ", length "...), int64(n), 10)
	case proto == 58 && len(b) >= 8:
		dst = append(addrs(dst), "ICMP6, "...)
		switch b[0] {
		case 128, 129:
			dst = appendEcho(dst, b, b[0] == 128)
		case 135:
			dst = append(dst, "neighbor solicitation"...)
		case 136:
			dst = append(dst, "neighbor advertisement"...)
		default:
			dst = strconv.AppendUint(append(dst, "type "...), uint64(b[0]), 10)
		}
		return strconv.AppendInt(append(dst, ", length "...), int64(n), 10)
	}
	dst = append(addrs(dst), "ip-proto-"...)
	dst = strconv.AppendUint(dst, uint64(proto), 10)
	return strconv.AppendInt(append(dst, ' '), int64(n), 10)
}

// appendEcho appends an ICMP or ICMPv6 echo's kind, id and sequence.
func appendEcho(dst, b []byte, request bool) []byte {
	if request {
		dst = append(dst, "echo request"...)
	} else {
		dst = append(dst, "echo reply"...)
	}
	dst = strconv.AppendUint(append(dst, ", id "...), uint64(binary.BigEndian.Uint16(b[4:])), 10)
	return strconv.AppendUint(append(dst, ", seq "...), uint64(binary.BigEndian.Uint16(b[6:])), 10)
}

// tcpFlags are tcpdump's letters for the TCP flags, in its order.
var tcpFlags = []struct {
	bit    byte
	letter byte
}{{0x01, 'F'}, {0x02, 'S'}, {0x04, 'R'}, {0x08, 'P'}, {0x10, '.'}, {0x20, 'U'}, {0x40, 'E'}, {0x80, 'W'}}

// appendTCP appends `Flags [S.], seq 1:101, ack 1, win 502, length 100`,
// sequence numbers absolute (tcpdump -S).
func appendTCP(dst, b []byte, n int) []byte {
	be := binary.BigEndian
	flags := b[13]
	dst = append(dst, "Flags ["...)
	for _, f := range tcpFlags {
		if flags&f.bit != 0 {
			dst = append(dst, f.letter)
		}
	}
	if flags == 0 {
		dst = append(dst, "none"...)
	}
	dst = append(dst, ']')
	length := n - int(b[12]>>4)*4
	seq := be.Uint32(b[4:])
	if flags&(0x01|0x02|0x04) != 0 || length > 0 {
		dst = strconv.AppendUint(append(dst, ", seq "...), uint64(seq), 10)
		if length > 0 {
			dst = strconv.AppendUint(append(dst, ':'), uint64(seq+uint32(length)), 10)
		}
	}
	if flags&0x10 != 0 {
		dst = strconv.AppendUint(append(dst, ", ack "...), uint64(be.Uint32(b[8:])), 10)
	}
	dst = strconv.AppendUint(append(dst, ", win "...), uint64(be.Uint16(b[14:])), 10)
	if flags&0x20 != 0 {
		dst = strconv.AppendUint(append(dst, ", urg "...), uint64(be.Uint16(b[18:])), 10)
	}
	return strconv.AppendInt(append(dst, ", length "...), int64(length), 10)
}

func appendARP(dst, b []byte) []byte {
	if len(b) < 28 || b[4] != 6 || b[5] != 4 {
		return append(dst, "ARP, [|arp]"...)
	}
	spa, tpa := netip.AddrFrom4([4]byte(b[14:18])), netip.AddrFrom4([4]byte(b[24:28]))
	switch binary.BigEndian.Uint16(b[6:]) {
	case 1:
		dst = append(dst, "ARP, Request who-has "...)
		dst = append(tpa.AppendTo(dst), " tell "...)
		dst = spa.AppendTo(dst)
	case 2:
		dst = append(spa.AppendTo(append(dst, "ARP, Reply "...)), " is-at "...)
		for i, x := range b[8:14] {
			if i > 0 {
				dst = append(dst, ':')
			}
			dst = append(dst, "0123456789abcdef"[x>>4], "0123456789abcdef"[x&0xf])
		}
	default:
		dst = strconv.AppendUint(append(dst, "ARP, op "...), uint64(binary.BigEndian.Uint16(b[6:])), 10)
	}
	return append(dst, ", length 28"...)
}
