package output

import "testing"

// TestAppendRaw checks bpftrace's three ways of printing a buffer: %r
// (printable bytes as they are), %rx (every byte \x41) and %rh (41 0a),
// the length byte bounding what is printed.
func TestAppendRaw(t *testing.T) {
	buf := []byte{4, 'A', 0, '\n', 0x7f, 'z'} // 4 bytes; the z is past them
	for _, tc := range []struct {
		mode byte
		want string
	}{
		{0, `A\x00\x0a\x7f`},
		{'x', `\x41\x00\x0a\x7f`},
		{'h', `41 00 0a 7f`},
	} {
		if got := string(appendRaw([]byte("|"), buf, tc.mode)); got != "|"+tc.want {
			t.Errorf("mode %q: %q, want %q", tc.mode, got, "|"+tc.want)
		}
	}
	if got := appendRaw(nil, []byte{0}, 'h'); len(got) != 0 {
		t.Errorf("an empty buffer printed %q", got)
	}
}
