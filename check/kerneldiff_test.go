package check

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// TestRenamedHint checks the hint for a member a kernel release renamed:
// given where the struct has the new name, not where it still has the old
// one (an older kernel's error is about something else), nor for others.
func TestRenamedHint(t *testing.T) {
	u32 := &btf.Int{Name: "unsigned int", Size: 4}
	renamed := &btf.Struct{Name: "cfs_rq", Members: []btf.Member{{Name: "nr_queued", Type: u32}}}
	old := &btf.Struct{Name: "cfs_rq", Members: []btf.Member{{Name: "nr_running", Type: u32}}}
	other := &btf.Struct{Name: "rq", Members: []btf.Member{{Name: "nr_queued", Type: u32}}}
	if h := renamedHint(renamed, "nr_running"); !strings.Contains(h, "Linux 6.14") || !strings.Contains(h, "->nr_queued") {
		t.Errorf("renamed: %q", h)
	}
	for _, st := range []*btf.Struct{old, other} {
		if h := renamedHint(st, "nr_running"); h != "" {
			t.Errorf("struct %s: %q", st.Name, h)
		}
	}
	if h := renamedHint(&btf.Typedef{Name: "x", Type: renamed}, "nr_running"); h == "" {
		t.Error("no hint through a typedef")
	}
}
