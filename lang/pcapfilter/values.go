package pcapfilter

import (
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/skbtrace/skbtrace/lang"
)

// parseNumber reads a number as libpcap does: decimal, 0x hexadecimal, or
// octal with a leading 0.
func parseNumber(s string) (uint64, bool) {
	base := 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	v, err := strconv.ParseUint(s, base, 32)
	return v, err == nil
}

func isNumber(s string) bool {
	_, ok := parseNumber(s)
	return ok
}

func (p *parser) number(t token) uint64 {
	v, ok := parseNumber(t.text)
	if t.kind != tokWord || !ok {
		p.fail(t, "", "expected a number, got %s", describe(t))
	}
	return v
}

// port reads a port number or service name, at most 65535. A name known
// only for TCP or only for UDP narrows q's protocol to it.
func (p *parser) port(t token, s string, q *qual) uint64 {
	if sv, ok := lookupService(s); ok {
		only := ""
		switch {
		case sv.tcp && !sv.udp:
			only = "tcp"
		case sv.udp && !sv.tcp:
			only = "udp"
		}
		switch {
		case only == "" || q.proto == only:
		case q.proto == "" || q.proto == "ip" || q.proto == "ip6":
			q.proto = only
		default:
			p.fail(t, "give the port's number", "%s is a %s port, not %s", s, strings.ToUpper(only), q.proto)
		}
		return sv.port
	}
	v, ok := parseNumber(s)
	if !ok {
		p.fail(t, "give the port's number", "unknown port %q", s)
	}
	if v > 65535 {
		p.fail(t, "", "port %d is greater than 65535", v)
	}
	return v
}

// protoNumber reads `proto`'s value: a number or a backslashed name.
func (p *parser) protoNumber(qproto string, t token) uint64 {
	if v, ok := parseNumber(t.text); ok {
		return v
	}
	name := strings.TrimPrefix(t.text, "\\")
	table := ipProtos
	if qproto == "ether" {
		table = etherProtos
	}
	if v, ok := table[name]; ok {
		return v
	}
	p.fail(t, "give its number, or a name such as \\tcp or \\udp", "unknown protocol %q", t.text)
	return 0
}

// host compiles `host X`: an IPv4 or IPv6 address, a MAC address, or a
// number taken as an IPv4 address.
func (p *parser) host(q qual, t token) (lang.Expr, error) {
	if q.proto == "ether" {
		mac, ok := parseMAC(t.text)
		if !ok {
			p.fail(t, "e.g. ether host 02:00:00:00:00:01", "%q is not a MAC address", t.text)
		}
		return p.b.etherHost(q, mac)
	}
	if v, ok := parseNumber(t.text); ok {
		return p.b.net4(q, uint32(v), 0xffffffff)
	}
	if a, err := netip.ParseAddr(t.text); err == nil {
		if a.Is4() {
			return p.b.net4(q, be32(a.As4()), 0xffffffff)
		}
		return p.b.net6(q, netip.PrefixFrom(a, 128))
	}
	if mac, ok := parseMAC(t.text); ok && q.proto == "" {
		return p.b.etherHost(q, mac)
	}
	p.fail(t, "give an address: host names are not looked up", "%q is not an IP address", t.text)
	return nil, nil
}

// net compiles `net X`, `net X/LEN` and `net X mask M`. An IPv4 network
// given in fewer than four parts (`net 10`, `net 10.1`) has a mask of as
// many bytes.
func (p *parser) net(q qual, t token) (lang.Expr, error) {
	if strings.Contains(t.text, ":") {
		a, err := netip.ParseAddr(t.text)
		if err != nil || !a.Is6() {
			p.fail(t, "", "%q is not an IPv6 network", t.text)
		}
		bits := 128
		if isOp(p.peek(), "/") {
			p.next()
			lt := p.next()
			bits = int(p.number(lt))
			if bits > 128 {
				p.fail(lt, "", "an IPv6 prefix length is at most 128, got %d", bits)
			}
		}
		pf := netip.PrefixFrom(a, bits)
		if pf.Masked().Addr() != a {
			p.fail(t, "write "+pf.Masked().String(), "non-network bits set in %q", t.text)
		}
		return p.b.net6(q, pf)
	}
	addr, parts, ok := parseDotted(t.text)
	if !ok {
		p.fail(t, "e.g. net 10.0.0.0/8", "%q is not an IPv4 network", t.text)
	}
	mask := ^uint32(0) << (32 - 8*parts)
	if parts == 4 {
		mask = 0xffffffff
	}
	switch n := p.peek(); {
	case isOp(n, "/"):
		p.next()
		lt := p.next()
		bits := p.number(lt)
		if bits > 32 {
			p.fail(lt, "", "an IPv4 prefix length is at most 32, got %d", bits)
		}
		mask = 0
		if bits > 0 {
			mask = ^uint32(0) << (32 - bits)
		}
	case isWord(n, "mask"):
		p.next()
		mt := p.next()
		m, err := netip.ParseAddr(mt.text)
		if err != nil || !m.Is4() {
			p.fail(mt, "", "%q is not an IPv4 netmask", mt.text)
		}
		mask = be32(m.As4())
	}
	if addr&^mask != 0 {
		p.fail(t, "", "non-network bits set in %q", t.text)
	}
	return p.b.net4(q, addr, mask)
}

// parseDotted reads an IPv4 address of one to four parts, left-aligned:
// "10.1" is 10.1.0.0 with 2 parts.
func parseDotted(s string) (uint32, int, bool) {
	f := strings.Split(s, ".")
	if len(f) > 4 {
		return 0, 0, false
	}
	var a uint32
	for i, x := range f {
		v, err := strconv.ParseUint(x, 10, 8)
		if err != nil {
			return 0, 0, false
		}
		a |= uint32(v) << (24 - 8*i)
	}
	return a, len(f), true
}

func parseMAC(s string) ([6]byte, bool) {
	var m [6]byte
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return m, false
	}
	copy(m[:], hw)
	return m, true
}

func be32(a [4]byte) uint32 {
	return uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
}
