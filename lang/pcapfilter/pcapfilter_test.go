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
// those `tcpdump -r` selects: the compiler's meaning, without a kernel.
// The kernel test in cmd/skbtrace checks the generated code the same way.
func TestEquivalenceInterpreted(t *testing.T) {
	frames := pcaptest.Frames()
	file, err := pcaptest.WriteFile(t.TempDir(), "frames.pcap")
	if err != nil {
		t.Fatal(err)
	}
	for _, filter := range pcaptest.Corpus {
		want, err := pcaptest.TcpdumpSelects(file, filter)
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
