package codegen_test

import "testing"

// TestLang026Run runs bpftrace 0.26's language in the kernel, in a begin
// probe, and checks the value it left in @r: each case is bpftrace's
// documented semantics of one construct.
func TestLang026Run(t *testing.T) {
	cases := []struct {
		name, script string
		want         int64
	}{
		// exit() ends the action at once: what follows it does not run.
		{"exit stops the probe", `begin { @r = 1; exit(); @r = 2 }`, 1},
		{"exit in a branch", `begin { @r = 1; if (@r == 1) { exit() } @r = 3 }`, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			coll := runBegin(t, c.script)
			if got := keyless(t, coll, "r"); got != c.want {
				t.Errorf("%s: @r = %d, want %d", c.script, got, c.want)
			}
		})
	}
}
