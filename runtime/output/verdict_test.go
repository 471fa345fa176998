package output

import (
	"testing"

	"github.com/skbtrace/skbtrace/check"
)

// TestFormatVerdict checks that bpfret:'s retval prints the verdict by its
// whole name, as the headers spell it (TC_ACT_SHOT, not SHOT), a negative
// one too, and a value with no name as a number.
func TestFormatVerdict(t *testing.T) {
	f := NewValues()
	for _, tt := range []struct {
		typ  string
		v    uint64
		want string
	}{
		{"tc", 2, "TC_ACT_SHOT"},
		{"tc", 0, "TC_ACT_OK"},
		{"tc", 7, "TC_ACT_REDIRECT"},
		{"tc", ^uint64(0), "TC_ACT_UNSPEC"},
		{"tc", 42, "42"},
		{"xdp", 1, "XDP_DROP"},
		{"xdp", 2, "XDP_PASS"},
		{"xdp", 0, "XDP_ABORTED"},
		{"cgroup_skb", 0, "SK_DROP"},
		{"cgroup_skb", 1, "SK_PASS"},
	} {
		if got := f.formatInt(tt.v, check.BPFVerdict(tt.typ)); got != tt.want {
			t.Errorf("%s verdict %d: %q, want %q", tt.typ, tt.v, got, tt.want)
		}
	}
}
