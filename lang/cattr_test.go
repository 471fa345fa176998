package lang

import (
	"strings"
	"testing"
)

// TestTypeAttrs checks __attribute__((...)) after a struct's closing
// brace (bpftrace 0.26): each attribute's name and argument, with or
// without the ; after it, and the errors of a misplaced or malformed one.
func TestTypeAttrs(t *testing.T) {
	s, err := Parse(&Source{Name: "t.bt", Text: "struct A { int a; } __attribute__((packed, aligned(8)));\n" +
		"struct B { int b; } /* c */ __attribute__ (( __packed__ )) begin { print(1) }\nstruct C { int c; }\nbegin { }"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Types) != 3 || len(s.Probes) != 2 {
		t.Fatalf("%d types, %d probes", len(s.Types), len(s.Probes))
	}
	var got []string
	for _, def := range s.Types {
		var as []string
		for _, a := range def.Attrs {
			x := a.Name
			if a.HasArg {
				x += "(" + itoa(a.Arg) + ")"
			}
			as = append(as, x)
		}
		got = append(got, def.Name+":"+strings.Join(as, ","))
	}
	if want := "A:packed,aligned(8) B:__packed__ C:"; strings.Join(got, " ") != want {
		t.Errorf("attributes %q, want %q", strings.Join(got, " "), want)
	}
	for _, c := range []struct{ text, err string }{
		{"__attribute__((packed));\nbegin { }", "t.bt:1:1: __attribute__ must follow a struct or union definition"},
		{"struct A { int a; } __attribute__(packed);\nbegin { }", "t.bt:1:21: expected (( after __attribute__"},
		{"struct A { int a; } __attribute__((aligned(x)));\nbegin { }", "aligned's argument must be an integer"},
		{"struct A { int a; } __attribute__((packed aligned));\nbegin { }", `unexpected "aligned" in __attribute__`},
		{"struct A { int a; }\nbegin { }\n__attribute__((packed));", "__attribute__ must follow a struct or union definition"},
	} {
		_, err := Parse(&Source{Name: "t.bt", Text: c.text})
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: got %v, want %q", c.text, err, c.err)
		}
	}
}
