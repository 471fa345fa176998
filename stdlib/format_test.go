package stdlib

import (
	"reflect"
	"testing"

	// The -update flag of golden files is defined there; `go test ./... -update` needs every package to accept it.
	_ "github.com/skbtrace/skbtrace/internal/golden"
)

func TestParseFormat(t *testing.T) {
	got, err := ParseFormat("%-16s %5lu 100%% %llx\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []Verb{
		{Text: "", Conv: 's', Flags: "-16"},
		{Text: " ", Conv: 'u', Flags: "5"},
		{Text: " 100% ", Conv: 'x'},
		{Text: "\n"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if n := Conversions(got); n != 3 {
		t.Errorf("Conversions = %d, want 3", n)
	}
	for _, bad := range []string{"%q", "%", "%-5"} {
		if _, err := ParseFormat(bad); err == nil {
			t.Errorf("ParseFormat(%q) accepted", bad)
		}
	}
}

func TestTablesHaveNoDuplicates(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range append(Names(), FuncNames()...) {
		if seen[n] {
			t.Errorf("builtin %q declared twice", n)
		}
		seen[n] = true
	}
}
