package lang

import (
	"strings"
	"testing"
)

// TestRawTracepointSpec checks rawtracepoint:[MODULE:]NAME and rt:.
func TestRawTracepointSpec(t *testing.T) {
	for _, text := range []string{"rawtracepoint:kfree_skb", "rt:kfree_skb", "rawtracepoint:vmlinux:kfree_skb"} {
		s, err := Parse(&Source{Name: "t.bt", Text: text + " { exit() }"})
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		sp := s.Probes[0].Specs[0]
		if sp.Kind != ProbeTracepoint || !sp.Raw || sp.Name != "kfree_skb" || sp.Category != "*" {
			t.Errorf("%s: %+v", text, sp)
		}
	}
	for _, bad := range []string{"rawtracepoint:", "rawtracepoint:a:b:c", "rt:1x"} {
		_, err := Parse(&Source{Name: "t.bt", Text: bad + " { exit() }"})
		if err == nil || !strings.Contains(err.Error(), "invalid rawtracepoint") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
