package session

import (
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/skbtrace/skbtrace/runtime/kernel"
)

// TestAllocOnUpdate: on a kernel that allows it, the hash maps (and only
// they) are created without preallocation, and the caller's specs are left
// as they were.
func TestAllocOnUpdate(t *testing.T) {
	if !kernel.NoPrealloc() {
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
