package output

import (
	"encoding/binary"
	"strconv"
)

// The UDP ports tcpdump decodes as tunnels, as its udp.c does: either
// port.
const (
	vxlanPort  = 4789
	genevePort = 6081
)

// udpTunnel returns the decode of a UDP payload to or from a tunnel's
// port; its arguments are the payload as far as it was captured and its
// length by the UDP header.
func udpTunnel(sport, dport uint16) (func(dst, b []byte, n int) []byte, bool) {
	switch {
	case sport == vxlanPort || dport == vxlanPort:
		return appendVXLAN, true
	case sport == genevePort || dport == genevePort:
		return appendGeneve, true
	}
	return nil, false
}

// appendVXLAN appends `VXLAN, flags [I] (0x08), vni 42` and the Ethernet
// frame it carries. tcpdump starts a line for the inner frame; here a
// space does, so that a pkt value stays on its event's line.
func appendVXLAN(dst, b []byte, n int) []byte {
	dst = append(dst, "VXLAN"...)
	if n < 8 || len(b) < 8 {
		return append(dst, " (invalid)"...)
	}
	flag := byte('.')
	if b[0]&0x08 != 0 {
		flag = 'I'
	}
	dst = append(dst, ", flags ["...)
	dst = append(append(dst, flag), "] (0x"...)
	dst = append(dst, hexDigits[b[0]>>4], hexDigits[b[0]&0xf])
	dst = strconv.AppendUint(append(dst, "), vni "...), uint64(binary.BigEndian.Uint32(b[4:])>>8), 10)
	return appendEther(append(dst, ' '), b[8:])
}

// hexDigits are the lower-case hexadecimal digits.
const hexDigits = "0123456789abcdef"

// geneveFlags are the Geneve header's flag bits as tcpdump names them,
// in its order.
var geneveFlags = []struct {
	bit  byte
	name string
}{{0x80, "O"}, {0x40, "C"}, {0x20, "R1"}, {0x10, "R2"}, {0x08, "R3"}, {0x04, "R4"}, {0x02, "R5"}, {0x01, "R6"}}

// appendGeneve appends `Geneve, Flags [none], vni 0x2b, options [8
// bytes]: ` and the packet it carries: an Ethernet frame where the
// protocol type is Transparent Ethernet Bridging (0x6558), else the
// packet of that Ethernet type.
func appendGeneve(dst, b []byte, n int) []byte {
	dst = append(dst, "Geneve"...)
	if n < 8 || len(b) < 8 {
		return append(dst, " [|geneve]"...)
	}
	if v := b[0] >> 6; v != 0 {
		return strconv.AppendUint(append(dst, " ERROR: unknown-version "...), uint64(v), 10)
	}
	dst = append(dst, ", Flags ["...)
	none := true
	for _, f := range geneveFlags {
		if b[1]&f.bit != 0 {
			dst, none = append(dst, f.name...), false
		}
	}
	if none {
		dst = append(dst, "none"...)
	}
	dst = strconv.AppendUint(append(dst, "], vni 0x"...), uint64(binary.BigEndian.Uint32(b[4:])>>8), 16)
	opts := int(b[0]&0x3f) * 4
	if opts > 0 {
		dst = strconv.AppendUint(append(dst, ", options ["...), uint64(opts), 10)
		dst = append(dst, " bytes]"...)
	}
	dst = append(dst, ": "...)
	if len(b) < 8+opts {
		return append(dst, "[|geneve]"...)
	}
	typ, payload := binary.BigEndian.Uint16(b[2:]), b[8+opts:]
	if d, ok := appendEtherType(dst, typ, payload); ok {
		return d
	}
	if typ == 0x6558 {
		return appendEther(dst, payload)
	}
	dst = append(dst, "ethertype unknown (0x"...)
	for _, sh := range []uint{12, 8, 4, 0} {
		dst = append(dst, hexDigits[typ>>sh&0xf])
	}
	return append(dst, ')')
}
