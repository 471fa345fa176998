package session

import "testing"

// TestUnknownHelper names the helper of the verifier's "invalid func
// unknown#N", which a kernel older than it says.
func TestUnknownHelper(t *testing.T) {
	for line, want := range map[string]string{
		"invalid func unknown#173":  "bpf_get_func_ip (#173)",
		"invalid func unknown#5":    "bpf_ktime_get_ns (#5)",
		"invalid func unknown#9999": "#9999",
	} {
		if got, ok := unknownHelper(line); !ok || got != want {
			t.Errorf("%q: %q, %v; want %q", line, got, ok, want)
		}
	}
	if _, ok := unknownHelper("R1 invalid mem access 'scalar'"); ok {
		t.Error("an other verifier error taken for a missing helper")
	}
}
