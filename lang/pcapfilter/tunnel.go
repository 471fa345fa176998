package pcapfilter

import "github.com/skbtrace/skbtrace/lang"

// The UDP ports, header values and limits of the tunnels.
const (
	vxlanPort  = 4789
	genevePort = 6081
	vxlanFlagI = 0x08   // VXLAN's flags byte: the VNI is valid, no other flag
	etherTEB   = 0x6558 // Transparent Ethernet Bridging: Geneve carries an Ethernet frame
	maxVNI     = 0xffffff
	tunnelHdr  = 8 // the VXLAN header; Geneve's without its options
	vniWord    = 4 // the VNI's word (its top 3 bytes) in either header
)

// tunnelName is how errors name a tunnel.
var tunnelName = map[string]string{"vxlan": "VXLAN", "geneve": "Geneve"}

// tunnel is `vxlan [vni]` or `geneve [vni]`, as libpcap compiles them
// (gencode.c: gen_vxlan, gen_geneve): a UDP datagram to the tunnel's port
// over IPv4 (not a later fragment) or IPv6 (UDP the next header), its
// header valid (VXLAN: flags exactly I; Geneve: version 0), the VNI if
// given; then every primitive after it in the filter's text tests the
// inner packet. The offsets of the inner packet's link header, type and
// network header are stored in the filter's slots where the tunnel
// matched: VXLAN carries an Ethernet frame; Geneve one where its protocol
// type is 0x6558, else the packet its type names, right after the
// header's variable-length options, and its protocol type is the type
// primitives test (`geneve and ip`).
func (b *builder) tunnel(kind string, vni *uint64) lang.Expr {
	port := uint64(vxlanPort)
	if kind == "geneve" {
		port = genevePort
	}
	// One family's test: udp is the datagram to the port, uh the offset
	// of the UDP header (an expression of the current layer).
	family := func(udp lang.Expr, uh func() lang.Expr) lang.Expr {
		hdr := func(k uint64) lang.Expr { return b.add(uh(), b.num(8+k)) }
		var valid lang.Expr
		if kind == "vxlan" {
			valid = b.eq(b.load(hdr(0), 1), vxlanFlagI)
		} else {
			valid = b.eq(b.bin("&", b.load(hdr(0), 1), b.num(0xc0)), 0)
		}
		x := b.and(udp, valid)
		if vni != nil {
			x = b.and(x, b.eq(b.bin("&", b.load(hdr(vniWord), 4), b.num(0xffffff00)), *vni<<8))
		}
		if kind == "vxlan" {
			return b.and(x, b.setSlot(SlotLink, hdr(tunnelHdr)))
		}
		// The link header (or the payload) follows the options, whose
		// length is the first byte's low 6 bits, in 4-byte words; the
		// protocol type is 2 bytes in.
		opts := b.bin("<<", b.bin("&", b.load(hdr(0), 1), b.num(0x3f)), b.num(2))
		x = b.and(x, b.setSlot(SlotLink, b.bin("+", hdr(tunnelHdr), opts)))
		return b.and(x, b.setSlot(SlotType, hdr(2)))
	}
	to := func(v lang.Expr) lang.Expr { return b.eq(v, port) }
	v4, _ := b.ports4([]uint64{ipProtos["udp"]}, "dst", to)
	v6, _ := b.ports6([]uint64{ipProtos["udp"]}, "dst", to)
	x := b.or(family(v4, func() lang.Expr { return b.transport(b.num(0)) }), family(v6, func() lang.Expr { return b.netOff(40) }))
	link := func(k uint64) lang.Expr { return b.add(b.slot(SlotLink), b.num(k)) }
	ether := b.and(b.setSlot(SlotType, link(12)), b.setSlot(SlotNet, link(14)))
	if kind == "geneve" {
		teb := b.eq(b.load(b.slot(SlotType), 2), etherTEB)
		ether = b.or(b.and(teb, ether), b.setSlot(SlotNet, b.slot(SlotLink)))
	}
	b.l = layer{inner: true}
	return b.and(x, ether)
}
