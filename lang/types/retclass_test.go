package types

import "testing"

// TestRetClassNames: each return class's name reads back as itself.
func TestRetClassNames(t *testing.T) {
	for _, rc := range []RetClass{{}, {Size: 8, Ptr: true}, {Size: 1}, {Size: 2, Signed: true}, {Size: 4, Signed: true}, {Size: 8}} {
		got, ok := ParseRetClass(rc.String())
		if !ok || got != rc {
			t.Errorf("%v: %q reads back as %v, %v", rc, rc.String(), got, ok)
		}
	}
	for _, bad := range []string{"", "s", "s12", "x32", "ptr8"} {
		if _, ok := ParseRetClass(bad); ok {
			t.Errorf("%q read as a class", bad)
		}
	}
}
