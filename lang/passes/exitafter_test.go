package passes_test

import (
	"testing"

	"github.com/skbtrace/skbtrace/lang"
	"github.com/skbtrace/skbtrace/lang/passes"
)

// TestExitAfterBegin checks bpftrace's rule: a script of only begin and
// end probes gets a last begin probe that calls exit(); any other probe
// keeps the script as it is.
func TestExitAfterBegin(t *testing.T) {
	cases := []struct {
		text string
		adds bool
	}{
		{`begin { printf("a") } end { printf("b") }`, true},
		{`BEGIN { @x = 1 }`, true},
		{`end { printf("b") }`, true},
		{`begin { } interval:s:1 { exit() }`, false},
		{`begin { } tracepoint:skb:kfree_skb { }`, false},
	}
	for _, c := range cases {
		s := parse(t, c.text)
		got := passes.ExitAfterBegin(s)
		unchanged(t, s)
		if !c.adds {
			if got != s {
				t.Errorf("%s: changed", c.text)
			}
			continue
		}
		if len(got.Probes) != len(s.Probes)+1 {
			t.Fatalf("%s: %d probes, want %d", c.text, len(got.Probes), len(s.Probes)+1)
		}
		last := got.Probes[len(got.Probes)-1]
		if last.Specs[0].Kind != lang.ProbeBegin || len(last.Body.Stmts) != 1 {
			t.Fatalf("%s: last probe %+v", c.text, last.Specs[0])
		}
		call, ok := last.Body.Stmts[0].(*lang.ExprStmt).X.(*lang.CallExpr)
		if !ok || call.Name != "exit" {
			t.Errorf("%s: last probe does not call exit()", c.text)
		}
	}
}
