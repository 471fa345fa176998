package runtime

import (
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

func TestReleaseVersion(t *testing.T) {
	for _, tc := range []struct {
		release string
		want    [2]int
		ok      bool
	}{
		{"6.18.0", [2]int{6, 18}, true},
		{"6.12.38+deb13-amd64", [2]int{6, 12}, true},
		{"6.1.0-37-amd64", [2]int{6, 1}, true},
		{"5.15.0-91-generic", [2]int{5, 15}, true},
		{"6.10-rc1", [2]int{6, 10}, true},
		{"6", [2]int{}, false},
		{"x.y", [2]int{}, false},
	} {
		got, ok := releaseVersion(tc.release)
		if got != tc.want || ok != tc.ok {
			t.Errorf("releaseVersion(%q) = %v, %v; want %v, %v", tc.release, got, ok, tc.want, tc.ok)
		}
	}
}

// TestAllocOnUpdate: on a kernel that allows it, the hash maps (and only
// they) are created without preallocation, and the caller's specs are left
// as they were.
func TestAllocOnUpdate(t *testing.T) {
	if !noPrealloc() {
		t.Skip("this kernel (before 6.1) keeps hash maps preallocated in tracing programs")
	}
	specs := map[string]*ebpf.MapSpec{
		"h":  {Name: "h", Type: ebpf.Hash, KeySize: 8, ValueSize: 8, MaxEntries: 16},
		"pc": {Name: "pc", Type: ebpf.PerCPUHash, KeySize: 8, ValueSize: 8, MaxEntries: 16},
		"a":  {Name: "a", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1},
		"l":  {Name: "l", Type: ebpf.LRUHash, KeySize: 8, ValueSize: 8, MaxEntries: 16},
	}
	got := allocOnUpdate(specs)
	for name, want := range map[string]uint32{"h": unix.BPF_F_NO_PREALLOC, "pc": unix.BPF_F_NO_PREALLOC, "a": 0, "l": 0} {
		if got[name].Flags != want {
			t.Errorf("%s: flags %#x, want %#x", name, got[name].Flags, want)
		}
		if specs[name].Flags != 0 {
			t.Errorf("%s: the caller's spec changed: flags %#x", name, specs[name].Flags)
		}
	}
	for name, s := range got {
		m, err := ebpf.NewMap(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m.Close()
	}
}
