package check

import (
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/lang"
)

// Kernels before Linux 5.17 give no drop reasons: their BTF has no enum
// skb_drop_reason, and neither tracepoint:skb:kfree_skb nor kfree_skb takes
// one. There `reason` still works where a later kernel gives one, as the
// reason such a kernel gives a drop whose code says nothing: NOT_SPECIFIED,
// a constant, typed with the enum as 5.17 first defined it. So a script
// that compares it with a reason's name (`reason == "NETFILTER_DROP"`)
// compiles, and the comparison is never true, and a tool that counts or
// prints reasons runs unchanged on old kernels and new. The checker says so
// once (a note), since every drop then reads the same.

// firstDropReasons are the values of enum skb_drop_reason as Linux 5.17
// first defined it (include/linux/skbuff.h), from 0 on.
var firstDropReasons = []string{
	"SKB_DROP_REASON_NOT_SPECIFIED",
	"SKB_DROP_REASON_NO_SOCKET",
	"SKB_DROP_REASON_PKT_TOO_SMALL",
	"SKB_DROP_REASON_TCP_CSUM",
	"SKB_DROP_REASON_SOCKET_FILTER",
	"SKB_DROP_REASON_UDP_CSUM",
	"SKB_DROP_REASON_NETFILTER_DROP",
	"SKB_DROP_REASON_OTHERHOST",
	"SKB_DROP_REASON_IP_CSUM",
	"SKB_DROP_REASON_IP_INHDR",
	"SKB_DROP_REASON_IP_RPFILTER",
	"SKB_DROP_REASON_UNICAST_IN_L2_MULTICAST",
}

// reasonNotSpecified is the value `reason` reads on a kernel without drop
// reasons: SKB_DROP_REASON_NOT_SPECIFIED of firstDropReasons.
const reasonNotSpecified = 0

// reasonlessDrops are the functions of kernels without drop reasons that
// later kernels give one: kfree_skb became kfree_skb_reason (5.17), and
// kfree_skb_list kfree_skb_list_reason.
var reasonlessDrops = []string{"kfree_skb", "kfree_skb_list"}

// noReasonsNote is what the checker says where a script reads `reason` on a
// kernel without drop reasons.
const noReasonsNote = "this kernel has no drop reasons (Linux 5.17 added them): reason reads NOT_SPECIFIED; drops, their locations and stacks are traced as before"

// dropReasonEnum is the kernel's enum skb_drop_reason or, where its BTF
// has none, the stand-in of firstDropReasons (standIn set). It is looked
// up once per check, so that every use of `reason` has the same type.
func (c *checker) dropReasonEnum() (en *btf.Enum, standIn bool) {
	if c.reasonEnum == nil {
		if err := c.opts.BTF.TypeByName("skb_drop_reason", &c.reasonEnum); err != nil {
			c.reasonEnum, c.reasonStandIn = standInDropReasons(), true
		}
	}
	return c.reasonEnum, c.reasonStandIn
}

func standInDropReasons() *btf.Enum {
	en := &btf.Enum{Name: "skb_drop_reason", Size: 4}
	for i, n := range firstDropReasons {
		en.Values = append(en.Values, btf.EnumValue{Name: n, Value: uint64(i)})
	}
	return en
}

// noDropReasons reports whether this kernel gives no drop reasons.
func (c *checker) noDropReasons() bool {
	_, standIn := c.dropReasonEnum()
	return standIn
}

// reasonStandsIn reports whether a spec is, on a kernel without drop
// reasons, where a later kernel gives one: tracepoint:skb:kfree_skb, or a
// probe with arguments on one of reasonlessDrops (si.Func for a glob's
// function).
func (c *checker) reasonStandsIn(si *SpecInfo) bool {
	if !c.noDropReasons() {
		return false
	}
	switch si.Spec.Kind {
	case lang.ProbeTracepoint:
		return si.Spec.Name == "kfree_skb" && (si.Spec.Category == "skb" || si.Spec.Category == "*")
	case lang.ProbeKprobe, lang.ProbeFentry, lang.ProbeFexit:
		return slices.Contains(reasonlessDrops, si.Function())
	}
	return false
}

// reasonHint says where `reason` is known, for the error where it is not.
func (c *checker) reasonHint() string {
	if c.noDropReasons() {
		return "this kernel has no drop reasons (Linux 5.17 added them); reason reads NOT_SPECIFIED on tracepoint:skb:kfree_skb and on " +
			strings.Join(reasonlessDrops, ", ")
	}
	return "use it on tracepoint:skb:kfree_skb, or on a function with an enum skb_drop_reason argument"
}

// reasonConst records that a use of `reason` reads the constant
// NOT_SPECIFIED, on a kernel without drop reasons, and says so once.
func (c *checker) reasonConst(e lang.Expr) {
	c.info.Consts[e] = Const{Int: reasonNotSpecified}
	c.note(noReasonsNote)
}
