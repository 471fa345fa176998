package stdlib

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// TestEveryDropReasonIsExplained checks the running kernel's enum
// skb_drop_reason against DropReasons: each reason has a sentence.
func TestEveryDropReasonIsExplained(t *testing.T) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		t.Fatalf("this test reads the kernel's BTF: %v", err)
	}
	var en *btf.Enum
	if err := spec.TypeByName("skb_drop_reason", &en); err != nil {
		t.Fatalf("no enum skb_drop_reason in the kernel's BTF: %v", err)
	}
	for _, v := range en.Values {
		name, ok := strings.CutPrefix(v.Name, "SKB_DROP_REASON_")
		if !ok {
			name = strings.TrimPrefix(v.Name, "SKB_") // SKB_CONSUMED, SKB_NOT_DROPPED_YET
		}
		if name == "MAX" || name == "SUBSYS_MASK" {
			continue
		}
		if DropReasons[name] == "" {
			t.Errorf("%s has no explanation in DropReasons", v.Name)
		}
	}
}
