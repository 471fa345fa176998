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
		{Text: " ", Conv: 'u', Flags: "5", Length: "l"},
		{Text: " 100% ", Conv: 'x', Length: "ll"},
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

// bpftrace's %r prints a buffer; %rx and %rh are its variants, the x or
// h part of the conversion, not text after it.
func TestParseFormatRaw(t *testing.T) {
	got, err := ParseFormat("%r|%-8rx|%rh %rr\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []Verb{
		{Conv: 'r'},
		{Text: "|", Conv: 'r', Flags: "-8", Raw: 'x'},
		{Text: "|", Conv: 'r', Raw: 'h'},
		{Text: " ", Conv: 'r'},
		{Text: "r\n"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// A name may be both a value and a function (kstack and kstack(), the
// time value and time("%H:%M")): a call and a name never look alike. Within
// each table it is unique.
func TestTablesHaveNoDuplicates(t *testing.T) {
	for _, names := range [][]string{Names(), FuncNames()} {
		seen := map[string]bool{}
		for _, n := range names {
			if seen[n] {
				t.Errorf("builtin %q declared twice", n)
			}
			seen[n] = true
		}
	}
}

// TestFormatLength checks that length modifiers are kept (hh and h
// truncate) and bpftrace's %g, %e and %f parse.
func TestFormatLength(t *testing.T) {
	vs, err := ParseFormat("%hhx %hd %lld %ld %g %e %5.1f")
	if err != nil {
		t.Fatal(err)
	}
	bits := []int{8, 16, 0, 0, 0, 0, 0}
	for i, v := range vs[:len(bits)] {
		if v.Bits() != bits[i] {
			t.Errorf("verb %d (%s%c): %d bits, want %d", i, v.Length, v.Conv, v.Bits(), bits[i])
		}
	}
	if vs[4].Conv != 'g' || vs[6].Conv != 'f' || vs[6].Flags != "5.1" {
		t.Errorf("floating conversions: %+v", vs[4:])
	}
}
