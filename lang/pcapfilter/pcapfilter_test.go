package pcapfilter

import (
	"slices"
	"testing"

	"github.com/skbtrace/skbtrace/internal/pcaptest"
	"github.com/skbtrace/skbtrace/lang"
)

func compile(t *testing.T, filter string) lang.Expr {
	t.Helper()
	src := &lang.Source{Name: "filter", Text: filter}
	x, err := Compile(filter, src.PosAt)
	if err != nil {
		t.Fatalf("%q: %v", filter, err)
	}
	return x
}

// TestTrees checks the expressions primitives compile to.
func TestTrees(t *testing.T) {
	for _, c := range []struct{ filter, tree string }{
		{"ip", "(== (ld 12 2) 2048)"},
		{"arp or rarp", "(|| (== (ld 12 2) 2054) (== (ld 12 2) 32821))"},
		{"icmp", "(&& (== (ld 12 2) 2048) (== (ld 23 1) 1))"},
		{"icmp6", "(&& (== (ld 12 2) 34525) (|| (== (ld 20 1) 58) (&& (== (ld 20 1) 44) (== (ld 54 1) 58))))"},
		{"src host 10.0.0.1", "(|| (&& (== (ld 12 2) 2048) (== (ld 26 4) 167772161)) (&& (|| (== (ld 12 2) 2054) (== (ld 12 2) 32821)) (== (ld 28 4) 167772161)))"},
		{"ip dst net 10.0.0.0/8", "(&& (== (ld 12 2) 2048) (== (& (ld 30 4) 4278190080) 167772160))"},
		{"udp dst port 53", "(|| (&& (== (ld 12 2) 34525) (&& (== (ld 20 1) 17) (== (ld 56 2) 53))) (&& (== (ld 12 2) 2048) (&& (== (ld 23 1) 17) (&& (== (& (ld 20 2) 8191) 0) (== (ld (+ 16 (<< (& (ld 14 1) 15) 2)) 2) 53)))))"},
		{"less 100", "(<= (len) 100)"},
		{"vlan 10 and ip", "(&& (&& (|| (|| (== (ld 12 2) 33024) (== (ld 12 2) 34984)) (== (ld 12 2) 37120)) (== (& (ld 14 2) 4095) 10)) (== (ld 16 2) 2048))"},
		{"tcp[tcpflags] & tcp-syn != 0", "(&& (&& (&& (== (ld 12 2) 2048) (== (ld 23 1) 6)) (== (& (ld 20 2) 8191) 0)) (!= (& (ld (+ 27 (<< (& (ld 14 1) 15) 2)) 1) 2) 0))"},
		{"len - 14 > 5", "(> (& (- (len) 14) 4294967295) 5)"},
		// and/or have equal precedence, to the left.
		{"arp or ip and ip6", "(&& (|| (== (ld 12 2) 2054) (== (ld 12 2) 2048)) (== (ld 12 2) 34525))"},
		// A bare value inherits the qualifiers before it, across not.
		{"ip host 1.2.3.4 and not 1.2.3.5", "(&& (&& (== (ld 12 2) 2048) (|| (== (ld 26 4) 16909060) (== (ld 30 4) 16909060))) (! (&& (== (ld 12 2) 2048) (|| (== (ld 26 4) 16909061) (== (ld 30 4) 16909061)))))"},
		{"", "1"},
		// A tunnel: UDP to its port over IPv4 (not a later fragment) or
		// IPv6, its header valid, the VNI; the inner packet's offsets are
		// stored (set) and what follows reads them (off), as libpcap's
		// registers. VXLAN's header is 8 bytes past the UDP header's start,
		// its Ethernet frame 16.
		{"vxlan 42 and ip", "(&& (&& (|| (&& (&& (&& (&& (== (ld 12 2) 2048) (&& (== (ld 23 1) 17) (&& (== (& (ld 20 2) 8191) 0) (== (ld (+ 16 (<< (& (ld 14 1) 15) 2)) 2) 4789)))) (== (ld (+ (+ 14 (<< (& (ld 14 1) 15) 2)) 8) 1) 8)) (== (& (ld (+ (+ 14 (<< (& (ld 14 1) 15) 2)) 12) 4) 4294967040) 10752)) (set 0 (+ (+ 14 (<< (& (ld 14 1) 15) 2)) 16))) (&& (&& (&& (&& (== (ld 12 2) 34525) (&& (== (ld 20 1) 17) (== (ld 56 2) 4789))) (== (ld 62 1) 8)) (== (& (ld 66 4) 4294967040) 10752)) (set 0 70))) (&& (set 1 (+ (off 0) 12)) (set 2 (+ (off 0) 14)))) (== (ld (off 1) 2) 2048))"},
		// Geneve: the payload past the options (their length in words in
		// the first byte's low 6 bits); the protocol type 2 bytes in is
		// the type, unless it is 0x6558 (an Ethernet frame); an Ethernet
		// address only where there is an Ethernet header.
		{"geneve and ether src 02:00:00:00:00:01", "(&& (&& (|| (&& (&& (&& (&& (== (ld 12 2) 2048) (&& (== (ld 23 1) 17) (&& (== (& (ld 20 2) 8191) 0) (== (ld (+ 16 (<< (& (ld 14 1) 15) 2)) 2) 6081)))) (== (& (ld (+ (+ 14 (<< (& (ld 14 1) 15) 2)) 8) 1) 192) 0)) (set 0 (+ (+ (+ 14 (<< (& (ld 14 1) 15) 2)) 16) (<< (& (ld (+ (+ 14 (<< (& (ld 14 1) 15) 2)) 8) 1) 63) 2)))) (set 1 (+ (+ 14 (<< (& (ld 14 1) 15) 2)) 10))) (&& (&& (&& (&& (== (ld 12 2) 34525) (&& (== (ld 20 1) 17) (== (ld 56 2) 6081))) (== (& (ld 62 1) 192) 0)) (set 0 (+ 70 (<< (& (ld 62 1) 63) 2)))) (set 1 64))) (|| (&& (== (ld (off 1) 2) 25944) (&& (set 1 (+ (off 0) 12)) (set 2 (+ (off 0) 14)))) (set 2 (off 0)))) (&& (!= (off 0) (off 2)) (&& (== (ld (+ (off 0) 8) 4) 1) (== (ld (+ (off 0) 6) 2) 512))))"},
		// VLAN tags move the type and the network header, in either layer.
		{"geneve and vlan and ip", "(&& (&& (&& (|| (&& (&& (&& (&& (== (ld 12 2) 2048) (&& (== (ld 23 1) 17) (&& (== (& (ld 20 2) 8191) 0) (== (ld (+ 16 (<< (& (ld 14 1) 15) 2)) 2) 6081)))) (== (& (ld (+ (+ 14 (<< (& (ld 14 1) 15) 2)) 8) 1) 192) 0)) (set 0 (+ (+ (+ 14 (<< (& (ld 14 1) 15) 2)) 16) (<< (& (ld (+ (+ 14 (<< (& (ld 14 1) 15) 2)) 8) 1) 63) 2)))) (set 1 (+ (+ 14 (<< (& (ld 14 1) 15) 2)) 10))) (&& (&& (&& (&& (== (ld 12 2) 34525) (&& (== (ld 20 1) 17) (== (ld 56 2) 6081))) (== (& (ld 62 1) 192) 0)) (set 0 (+ 70 (<< (& (ld 62 1) 63) 2)))) (set 1 64))) (|| (&& (== (ld (off 1) 2) 25944) (&& (set 1 (+ (off 0) 12)) (set 2 (+ (off 0) 14)))) (set 2 (off 0)))) (|| (|| (== (ld (off 1) 2) 33024) (== (ld (off 1) 2) 34984)) (== (ld (off 1) 2) 37120))) (== (ld (+ (off 1) 4) 2) 2048))"},
	} {
		if got := sexpr(compile(t, c.filter)); got != c.tree {
			t.Errorf("%q:\n got %s\nwant %s", c.filter, got, c.tree)
		}
	}
}

// TestErrors checks that mistakes are reported at the right bytes.
func TestErrors(t *testing.T) {
	for _, c := range []struct {
		filter  string
		off     int
		message string
	}{
		{"host", 4, `expected a value, got the end of the filter`},
		{"10.0.0.1", 0, `"10.0.0.1" needs a qualifier before it`},
		{"tcp and 80", 8, `"80" needs a qualifier before it`},
		{"host 10.0.0.1 and port 99999", 23, `port 99999 is greater than 65535`},
		{"host example.com", 5, `"example.com" is not an IP address`},
		{"tcp port 80 )", 12, `unexpected ")": expected and, or or the end of the filter`},
		{"tcp[13:3] = 1", 7, `the size of a load is 1, 2 or 4 bytes, got 3`},
		{"net 10.0.0.1/8", 4, `non-network bits set in "10.0.0.1"`},
		{"tcp host 10.0.0.1", 9, `'tcp' modifier applied to an IPv4 host`},
		{"len / 0 > 1", 4, `division by zero`},
		{"port 80 $", 8, `unexpected character '$'`},
		{"ip proto tcp", 9, `expected a value, got "tcp"`},
		{"tcp 80", 4, `"80" needs host, net, port or proto before it`},
		{"(tcp", 4, `expected ")", got the end of the filter`},
		{"geneve 0x1000000", 7, `Geneve VNI 16777216 is greater than 16777215`},
		{"udp and vxlan 16777216 and tcp", 14, `VXLAN VNI 16777216 is greater than 16777215`},
		{"geneve net 10", 7, `geneve takes a VNI, a number from 0 to 16777215, got "net"`},
		{"vxlan vni", 6, `vxlan takes a VNI, a number from 0 to 16777215, got "vni"`},
		{"vxlan 42 42", 9, `unexpected "42": expected and, or or the end of the filter`},
	} {
		src := &lang.Source{Name: "filter", Text: c.filter}
		_, err := Compile(c.filter, src.PosAt)
		e, ok := err.(*Error)
		if !ok {
			t.Errorf("%q: error %v, want %s at %d", c.filter, err, c.message, c.off)
			continue
		}
		if e.Msg != c.message || e.Off != c.off {
			t.Errorf("%q: %q at %d, want %q at %d", c.filter, e.Msg, e.Off, c.message, c.off)
		}
	}
}

// TestEquivalenceInterpreted compares, for every filter of the corpus,
// the frames the compiled expression selects (interpreted in Go) with
// those `tcpdump -r` selects (pcaptest.Selects, vxlan by its Geneve
// twin): the compiler's meaning, without a kernel.
// The kernel test in cmd/skbtrace checks the generated code the same way.
func TestEquivalenceInterpreted(t *testing.T) {
	frames := pcaptest.Frames()
	dir := t.TempDir()
	for _, filter := range pcaptest.Corpus {
		want, err := pcaptest.Selects(dir, filter)
		if err != nil {
			t.Fatal(err)
		}
		x := compile(t, filter)
		var got []int
		for i, fr := range frames {
			v, err := eval(x, fr)
			if err != nil && err != errShort {
				t.Fatalf("%q: %v", filter, err)
			}
			if v != 0 {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: selects %v, tcpdump %v", filter, got, want)
		}
	}
}

// TestTunnelScope checks what libpcap's grammar makes of a tunnel: every
// primitive after it in the filter's text tests the inner packet, across
// or (where the offsets stay those the last tunnel that matched stored),
// and a primitive that tests an inner packet that is not there (no tunnel
// matched before it) makes the filter false. tcpdump reads registers
// nothing stored in that case (memory as it happens to be), so these are
// checked against the frames' contents, not against tcpdump.
func TestTunnelScope(t *testing.T) {
	frames := pcaptest.Frames()
	for _, c := range []struct {
		filter string
		want   []int
	}{
		// Frame 44 is Geneve (UDP to port 9 inside), 53 UDP to port 9
		// without a tunnel: the second `udp port 9` tests an inner packet.
		{"geneve and udp port 9", []int{44}},
		{"udp port 9 or geneve and udp port 9", []int{44}},
		{"not geneve and udp", []int{}},
		// Geneve failed its inner test: `udp port 53` tests the inner
		// packet of the Geneve that matched (47: IPv6, UDP to 53 inside),
		// and none of a packet with no tunnel (6, 17: UDP to 53).
		{"geneve and udp port 9 or udp port 53", []int{44, 47}},
		// Parentheses do not end the tunnel's scope.
		{"(vxlan) and tcp", []int{36}},
	} {
		x := compile(t, c.filter)
		got := []int{}
		for i, fr := range frames {
			if v, err := eval(x, fr); err == nil && v != 0 {
				got = append(got, i)
			} else if err != nil && err != errShort {
				t.Fatalf("%q: %v", c.filter, err)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: selects %v, want %v", c.filter, got, c.want)
		}
	}
}
