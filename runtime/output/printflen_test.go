package output

import (
	"testing"

	"github.com/skbtrace/skbtrace/stdlib"
)

// TestPrintfLength checks hh and h truncation, %d signed whatever the
// type, and %g of an integer.
func TestPrintfLength(t *testing.T) {
	verbs, err := stdlib.ParseFormat("%hhx %hx %hhd %d %g")
	if err != nil {
		t.Fatal(err)
	}
	vs := parseVerbs(verbs, false)
	got := string(vs[0].appendInt(nil, vs[0].truncate(0x1234), false)) + " " +
		string(vs[1].appendInt(nil, vs[1].truncate(0x123456), false)) + " " +
		string(vs[2].appendInt(nil, vs[2].truncate(255), true)) + " " +
		string(vs[3].appendInt(nil, vs[3].truncate(^uint64(0)), true)) + " " +
		string(vs[4].appendFloat(nil, 3, false))
	if want := "34 3456 -1 -1 3"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
