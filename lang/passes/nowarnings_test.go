package passes

import (
	"testing"

	"github.com/skbtrace/skbtrace/lang"
)

// TestDropWarnf checks that warnf statements go, nested ones too, and
// that the script given keeps them.
func TestDropWarnf(t *testing.T) {
	s, err := lang.Parse(&lang.Source{Name: "t", Text: `begin { warnf("a"); if (1) { warnf("b"); printf("c") } }`})
	if err != nil {
		t.Fatal(err)
	}
	out := DropWarnf(s)
	if hasWarnf(out.Probes[0].Body) {
		t.Error("a warnf is left")
	}
	if !hasWarnf(s.Probes[0].Body) {
		t.Error("the script given lost its warnf")
	}
	if DropWarnf(out) != out {
		t.Error("a script without warnf is not returned as it is")
	}
}
