package types

import (
	"testing"

	"github.com/cilium/ebpf/btf"
)

// TestEnumPrefix: the prefix all but a couple of values share is left out
// (SKB_DROP_REASON_, not SKB_ where two odd ones differ); an enum without
// one keeps its names; the verdicts keep theirs whole.
func TestEnumPrefix(t *testing.T) {
	enum := func(names ...string) *btf.Enum {
		en := &btf.Enum{Name: "e"}
		for i, n := range names {
			en.Values = append(en.Values, btf.EnumValue{Name: n, Value: uint64(i)})
		}
		return en
	}
	for _, c := range []struct {
		en   *btf.Enum
		want string
	}{
		{enum("SKB_NOT_DROPPED_YET", "SKB_CONSUMED", "SKB_DROP_REASON_NOT_SPECIFIED", "SKB_DROP_REASON_NO_SOCKET",
			"SKB_DROP_REASON_PKT_TOO_SMALL", "SKB_DROP_REASON_TCP_CSUM", "SKB_DROP_REASON_MAX"), "SKB_DROP_REASON_"},
		{enum("TCP_ESTABLISHED", "TCP_SYN_SENT", "TCP_SYN_RECV", "TCP_FIN_WAIT1", "TCP_CLOSE"), "TCP_"},
		{enum("ONE", "TWO", "THREE"), ""},
		{enum(), ""},
		{VerdictEnum("tc"), ""},
		{VerdictEnum("xdp"), ""},
	} {
		if got := EnumPrefix(c.en); got != c.want {
			t.Errorf("EnumPrefix(%v) = %q, want %q", c.en.Values, got, c.want)
		}
	}
	if VerdictEnum("lwt") != nil {
		t.Error("a verdict enum for lwt programs")
	}
}
