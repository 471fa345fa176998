package kernel

import (
	"os"
	"testing"
)

// TestTrampolineOps: this host's kernel (6.18) gives every fentry trampoline
// an ftrace_ops of its own (struct bpf_trampoline's fops, Linux 6.0 on), as
// discovery reads it from BTF and the cache keeps it; a struct without the
// member says false.
func TestTrampolineOps(t *testing.T) {
	raw, err := os.ReadFile("/sys/kernel/btf/vmlinux")
	if err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
	base, err := parseBTF(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !base.hasMember("bpf_trampoline", "fops") {
		t.Errorf("struct bpf_trampoline has no fops on Linux %v", Release())
	}
	if base.hasMember("bpf_trampoline", "no_such_member") || base.hasMember("no_such_struct", "fops") {
		t.Errorf("hasMember finds what is not there")
	}
	d, err := DiscoverSkbFuncs("")
	if err != nil {
		t.Fatal(err)
	}
	file := t.TempDir() + "/cache"
	writeCache(file, d)
	c, err := readCache(file)
	if err != nil || c.TrampolineOps != d.TrampolineOps || !d.TrampolineOps {
		t.Errorf("cached %+v (%v), discovered %v", c != nil && c.TrampolineOps, err, d.TrampolineOps)
	}
}
