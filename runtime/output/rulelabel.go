package output

import (
	"strconv"
	"strings"
	"sync"

	"github.com/skbtrace/skbtrace/lang/types"
	"github.com/skbtrace/skbtrace/runtime/rules"
)

// MaxRuleLabels is how many distinct rules a map key's rule() part names
// (dropcount's rule label): a rule past them is RuleOther, so that a map's
// series stay bounded (--metrics-max-series counts series, not rules).
const MaxRuleLabels = 64

// maxRuleKeys is how many distinct rule() records (a flow each) keep their
// label; past them a record is RuleOther without asking the namer.
const maxRuleKeys = 16 * 1024

// RuleOther is the label of a rule past MaxRuleLabels.
const RuleOther = "other"

// RuleUnknown is the label of a netfilter or tc drop whose rule cannot be
// told (no --nftrace, a trace lost, several counters rose).
const RuleUnknown = "-"

// ruleLabels names rule() records as a map key part, once each: the namer
// is asked the first time a record is formatted and its answer kept (a
// trace, or a counter's rise, is there once; a scrape later must print the
// same label), with at most max distinct labels.
type ruleLabels struct {
	mu     sync.Mutex
	max    int
	byKey  map[string]string
	labels map[string]bool
}

func newRuleLabels(max int) *ruleLabels {
	return &ruleLabels{max: max, byKey: map[string]string{}, labels: map[string]bool{}}
}

// label is the record raw's label, naming it with name on first sight.
func (l *ruleLabels) label(raw []byte, name func() string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.byKey[string(raw)]; ok {
		return s
	}
	if len(l.byKey) >= maxRuleKeys {
		return RuleOther
	}
	s := name()
	if s != "" && s != RuleUnknown && !l.labels[s] {
		if len(l.labels) >= l.max {
			s = RuleOther
		} else {
			l.labels[s] = true
		}
	}
	l.byKey[string(raw)] = s
	return s
}

// ruleLabel is a rule() record's text as a map key part: the rule that
// dropped the packet, in a word each field, no text nor comment:
//
//	nft inet web deny handle 4      an nftables (or iptables-nft) rule
//	nft inet web input policy       a base chain's policy
//	ipt filter INPUT rule 2         an iptables-legacy rule (rule 0: the policy)
//	tc v2 ingress pref 10 handle 800::800 order 1   a tc filter's action
//
// RuleUnknown for a netfilter or tc drop the namer cannot name; "" for
// the reasons no rule gives.
func (f *Values) ruleLabel(t types.Type, raw []byte) string {
	d := f.ruleDrop(t, raw)
	switch d.Reason {
	case "NETFILTER_DROP", "TC_INGRESS", "TC_EGRESS":
	default:
		return ""
	}
	if f.rules == nil {
		return RuleUnknown
	}
	return f.ruleKeys.label(raw, func() string { return verdictLabel(f.rules.Rule(d)) })
}

// verdictLabel is a named verdict's label, RuleUnknown for none.
func verdictLabel(v rules.Verdict) string {
	switch v.Kind {
	case "nftables":
		s := "nft " + v.Family + " " + v.Table + " " + v.Chain
		if v.Policy {
			return s + " policy"
		}
		return s + " handle " + strconv.FormatUint(v.Handle, 10)
	case "iptables-legacy":
		return "ipt " + v.Table + " " + v.Chain + " rule " + strconv.Itoa(v.Number)
	case "tc":
		// Text: filter protocol ip pref 10 u32 chain 0 handle 800::800, action order 1: ...
		s := "tc " + v.Dev + " " + v.Hook
		for _, w := range []string{"pref", "handle", "order"} {
			if i := strings.Index(v.Text, " "+w+" "); i >= 0 {
				rest := v.Text[i+len(w)+2:]
				if j := strings.IndexAny(rest, " ,"); j >= 0 {
					rest = strings.TrimSuffix(rest[:j], ":")
				}
				s += " " + w + " " + rest
			}
		}
		return s
	}
	return RuleUnknown
}
