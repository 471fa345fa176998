package lang

import (
	"errors"
	"strings"
	"testing"
)

// TestUnsupportedConstructs checks that bpftrace's constructs skbtrace
// does not compile are each a positioned error naming the construct, with
// what to write instead.
func TestUnsupportedConstructs(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"import \"foo\";\nBEGIN { exit() }", "1:1: unable to find suitable path for import"},
	} {
		_, err := Parse(&Source{Name: "x.st", Text: c.text})
		var d *Diagnostics
		if !errors.As(err, &d) || !strings.Contains(err.Error(), "x.st:"+c.want) || !strings.Contains(err.Error(), "hint: ") {
			t.Errorf("%s: got %v, want x.st:%s with a hint", c.text, err, c.want)
		}
	}
}
