package types

import (
	"strings"

	"github.com/cilium/ebpf/btf"
)

// EnumPrefix is the longest prefix, ending in an underscore, that all but a
// couple of an enum's values share: SKB_DROP_REASON_ for skb_drop_reason.
// Scripts and output leave it out, as the kernel's own tracepoint output
// does. The verdicts (VerdictEnum) keep their names whole.
func EnumPrefix(en *btf.Enum) string {
	if len(en.Values) == 0 || isVerdictEnum(en) {
		return ""
	}
	mid := en.Values[len(en.Values)/2].Name
	best := ""
	for i := 0; i < len(mid); i++ {
		if mid[i] != '_' {
			continue
		}
		p := mid[:i+1]
		n := 0
		for _, v := range en.Values {
			if strings.HasPrefix(v.Name, p) {
				n++
			}
		}
		// All but a couple of odd ones (SKB_NOT_DROPPED_YET, SKB_CONSUMED):
		// a prefix of only half would cut sk_rst_reason's MPTCP_ names.
		if n >= len(en.Values)-2 && n*2 > len(en.Values) {
			best = p
		}
	}
	return best
}

// VerdictEnum is the enum of the verdicts a BPF program of a type (tc,
// xdp, cgroup_skb) returns, nil for another type. Their names print whole
// (TC_ACT_SHOT, XDP_DROP: as the headers spell them), not without their
// common prefix as the kernel's enums do (EnumPrefix).
func VerdictEnum(progType string) *btf.Enum { return verdictEnums[progType] }

// isVerdictEnum reports whether en is one of verdictEnums.
func isVerdictEnum(en *btf.Enum) bool {
	for _, v := range verdictEnums {
		if v == en {
			return true
		}
	}
	return false
}

func verdictEnum(name string, values ...any) *btf.Enum {
	en := &btf.Enum{Name: name, Size: 4, Signed: true}
	for i := 0; i < len(values); i += 2 {
		en.Values = append(en.Values, btf.EnumValue{Name: values[i].(string), Value: uint64(int64(values[i+1].(int)))})
	}
	return en
}

// verdictEnums are the verdicts by program type: tc's TC_ACT_* of
// <linux/pkt_cls.h> (defines, not in BTF), XDP's enum xdp_action, and
// enum sk_action, which a cgroup_skb program's 0 and 1 are.
var verdictEnums = map[string]*btf.Enum{
	"tc": verdictEnum("tc_action", "TC_ACT_UNSPEC", -1, "TC_ACT_OK", 0, "TC_ACT_RECLASSIFY", 1, "TC_ACT_SHOT", 2,
		"TC_ACT_PIPE", 3, "TC_ACT_STOLEN", 4, "TC_ACT_QUEUED", 5, "TC_ACT_REPEAT", 6, "TC_ACT_REDIRECT", 7, "TC_ACT_TRAP", 8),
	"xdp":        verdictEnum("xdp_action", "XDP_ABORTED", 0, "XDP_DROP", 1, "XDP_PASS", 2, "XDP_TX", 3, "XDP_REDIRECT", 4),
	"cgroup_skb": verdictEnum("sk_action", "SK_DROP", 0, "SK_PASS", 1),
}
