package passes_test

import (
	"testing"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/passes"
)

// skbProbes says the probes whose first spec is an skb: probe have an skb,
// as the checker would.
func skbProbes(p *lang.Probe) bool { return p.Specs[0].Kind == lang.ProbeSkb }

// TestFilter checks the tree Filter returns: pcap(FILTER) alone as the
// predicate of an skb probe without one, ANDed in front of the
// parenthesised predicate of one with one, the probes without an skb as
// they were; and the tree it was given unchanged.
func TestFilter(t *testing.T) {
	s := parse(t, `skb:ip_rcv { print(1) }
BEGIN { print(2) }
skb:tcp_* /$x || $y/ { print(3) }`)
	got, ok := passes.Filter(s, "tcp port 80", skbProbes)
	if !ok {
		t.Fatal("Filter found no skb probe")
	}
	unchanged(t, s)
	for i, want := range []string{`pcap("tcp port 80")`, "", `pcap("tcp port 80") && ($x || $y)`} {
		p := got.Probes[i]
		if want == "" {
			if p != s.Probes[i] {
				t.Errorf("probe %d, without an skb, was copied", i)
			}
			continue
		}
		if g := predText(s, p.Pred); g != want {
			t.Errorf("probe %d: predicate %s, want %s", i, g, want)
		}
	}
	if _, ok := passes.Filter(parse(t, `BEGIN { print(1) }`), "tcp", skbProbes); ok {
		t.Error("Filter reported a change in a script without an skb probe")
	}
}

// predText writes a predicate Filter made: its pcap() call, and the
// probe's own predicate as the source has it.
func predText(s *lang.Script, e lang.Expr) string {
	switch e := e.(type) {
	case *lang.CallExpr:
		if e.Name == "pcap" && len(e.Args) == 1 {
			if str, ok := e.Args[0].(*lang.StrLit); ok {
				return `pcap("` + str.Value + `")`
			}
		}
	case *lang.BinaryExpr:
		return predText(s, e.X) + " " + e.Op + " " + predText(s, e.Y)
	case *lang.ParenExpr:
		return "(" + s.Src.Slice(e.X.Span()) + ")"
	}
	return "?"
}

// TestCapture checks the tree Capture returns: capture() first in each skb
// probe that does not call it itself, the others as they were; and the
// tree it was given unchanged.
func TestCapture(t *testing.T) {
	s := parse(t, `skb:ip_rcv { print(1) }
skb:ip_output { if ($x) { capture() } }
BEGIN { print(2) }`)
	got, ok := passes.Capture(s, skbProbes)
	if !ok {
		t.Fatal("Capture found no skb probe to add capture() to")
	}
	unchanged(t, s)
	body := got.Probes[0].Body.Stmts
	if len(body) != 2 || body[1] != s.Probes[0].Body.Stmts[0] {
		t.Fatalf("probe 0 has %d statements, want capture() and its own", len(body))
	}
	if call, ok := body[0].(*lang.ExprStmt).X.(*lang.CallExpr); !ok || call.Name != "capture" || len(call.Args) != 0 {
		t.Errorf("probe 0 starts with %#v, want capture()", body[0])
	}
	if got.Probes[1] != s.Probes[1] || got.Probes[2] != s.Probes[2] {
		t.Error("a probe that calls capture() itself, or has no skb, was copied")
	}
	if !passes.CallsCapture(got) || passes.CallsCapture(s.Probes[0]) {
		t.Error("CallsCapture does not find capture() where it is, or finds it where it is not")
	}
	if _, ok := passes.Capture(parse(t, `skb:ip_rcv { capture() }`), skbProbes); ok {
		t.Error("Capture reported a change where every skb probe calls capture()")
	}
}
