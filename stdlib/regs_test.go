package stdlib

import "testing"

// The offsets are struct pt_regs' in the kernel's BTF on each
// architecture (codegen/arch.go's layout agrees: di is the first argument
// at 112 on amd64, x0 at 0 on arm64).
func TestRegOffsets(t *testing.T) {
	for _, c := range []struct {
		arch, name string
		off        int16
		ok         bool
	}{
		{"amd64", "r15", 0, true}, {"amd64", "di", 112, true}, {"amd64", "ip", 128, true}, {"amd64", "sp", 152, true}, {"amd64", "ss", 160, true},
		{"arm64", "r0", 0, true}, {"arm64", "r30", 240, true}, {"arm64", "sp", 248, true}, {"arm64", "pc", 256, true}, {"arm64", "pstate", 264, true},
		{"amd64", "r0", 0, false}, {"arm64", "ip", 0, false}, {"amd64", "bogus", 0, false},
	} {
		off, ok := RegOffset(c.arch, c.name)
		if ok != c.ok || ok && off != c.off {
			t.Errorf("%s %s: %d %v, want %d %v", c.arch, c.name, off, ok, c.off, c.ok)
		}
	}
}
