package output

import (
	"testing"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/runtime/rules"
)

// TestRuleLabelsBound: past the limit of distinct rules a new rule is
// "other"; a record keeps its first label (a later scrape names it as the
// first did, the namer not asked again); "-" and "" count for no rule.
func TestRuleLabelsBound(t *testing.T) {
	l := newRuleLabels(2)
	asked := 0
	name := func(s string) func() string { return func() string { asked++; return s } }
	for _, c := range []struct{ key, named, want string }{
		{"flow1", "nft inet web deny handle 4", "nft inet web deny handle 4"},
		{"flow2", "-", "-"},
		{"flow3", "nft inet web deny handle 4", "nft inet web deny handle 4"},
		{"flow4", "ipt filter INPUT rule 2", "ipt filter INPUT rule 2"},
		{"flow5", "nft inet web deny handle 9", RuleOther},
		{"flow6", "ipt filter INPUT rule 2", "ipt filter INPUT rule 2"},
		{"flow1", "nft inet web other handle 1", "nft inet web deny handle 4"},
		{"flow5", "nft inet web deny handle 9", RuleOther},
	} {
		if got := l.label([]byte(c.key), name(c.named)); got != c.want {
			t.Errorf("label(%s) naming %q = %q, want %q", c.key, c.named, got, c.want)
		}
	}
	if asked != 6 {
		t.Errorf("the namer was asked %d times, want 6 (once a record)", asked)
	}
}

func TestVerdictLabel(t *testing.T) {
	for _, c := range []struct {
		v    rules.Verdict
		want string
	}{
		{rules.Verdict{Kind: "nftables", Family: "inet", Table: "web", Chain: "deny", Handle: 4, Text: `udp dport 7001 drop comment "x"`}, "nft inet web deny handle 4"},
		{rules.Verdict{Kind: "nftables", Family: "ip", Table: "filter", Chain: "INPUT", Policy: true}, "nft ip filter INPUT policy"},
		{rules.Verdict{Kind: "iptables-legacy", Table: "filter", Chain: "INPUT", Number: 2}, "ipt filter INPUT rule 2"},
		{rules.Verdict{Kind: "tc", Dev: "v2", Hook: "ingress", Text: "filter protocol ip pref 10 u32 chain 0 handle 800::800, action order 1: gact drop"}, "tc v2 ingress pref 10 handle 800::800 order 1"},
		{rules.Verdict{Note: "which nftables rule: run with --nftrace"}, RuleUnknown},
	} {
		if got := verdictLabel(c.v); got != c.want {
			t.Errorf("verdictLabel(%+v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestMergeRuleKeys: elements whose keys print alike become one, their
// counts added; a map without a rule() key is left as it is.
func TestMergeRuleKeys(t *testing.T) {
	rule := types.NewTuple([]types.Type{types.U64}, []string{"reason"})
	rule.Fmt = types.FmtRule
	l := &codegen.MapLayout{Name: "drops", Kind: codegen.MapCount, Value: types.Type{Kind: types.Agg, Agg: types.AggCount}, Keys: []codegen.KeyField{{Name: "rule(...)", Type: rule}}}
	in := []Entry{{Key: "[nft inet a b handle 2]", Value: Agg{N: 3}}, {Key: "[-]", Value: Agg{N: 1}}, {Key: "[nft inet a b handle 2]", Value: Agg{N: 4}}}
	got := MergeRuleKeys(l, in)
	if len(got) != 2 || got[0].Value.N != 7 || got[1].Value.N != 1 {
		t.Errorf("merged: %+v, want [nft inet a b handle 2]: 7, [-]: 1", got)
	}
	l.Keys[0].Type = types.U64
	in = []Entry{{Key: "[1]"}, {Key: "[1]"}}
	if got := MergeRuleKeys(l, in); len(got) != 2 {
		t.Errorf("a map without rule(): %d entries, want 2", len(got))
	}
}
