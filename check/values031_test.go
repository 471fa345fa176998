package check_test

import (
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
)

// sizeofs returns the values of the script's sizeof and offsetof
// expressions, in source order.
func sizeofs(info *check.Info) map[int]uint64 {
	out := map[int]uint64{}
	for e, k := range info.Consts {
		switch e.(type) {
		case *lang.TypeOfExpr, *lang.CallExpr:
			out[e.Span().Start.Offset] = k.Int
		}
	}
	return out
}

// TestTupleIndex checks bpftrace 0.25's $t[N]: the element's type, the
// index a constant expression, and the errors of bpftrace's rule.
func TestTupleIndex(t *testing.T) {
	info, err := checkText(t, `begin { $t = ((uint8)1, "ab", ((uint16)3, (uint64)4)); $a = $t[1]; $b = $t[2][1 - 1]; $c = (1, "x")[0] }`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for e, ty := range info.Types {
		if ie, ok := e.(*lang.IndexExpr); ok {
			got[info.Text(ie)] = ty.String()
			if info.TupleIdx[ie] == nil {
				t.Errorf("%s: no element recorded", info.Text(ie))
			}
		}
	}
	want := map[string]string{"$t[1]": "string[3]", "$t[2]": "(u16, u64)", "$t[2][1 - 1]": "u16", `(1, "x")[0]`: "s64"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s is %s, want %s", k, got[k], w)
		}
	}
	for _, c := range []struct{ text, err string }{
		{`begin { $t = (1, "a", 3); print($t[3]) }`, "t.bt:1:33: invalid tuple index 3: $t has 3 elements"},
		{`begin { $t = (1, "a", 3); $i = 1; print($t[$i]) }`, "t.bt:1:41: array-style access for tuples is only valid for integer literals"},
		{`begin { $t = (1, "a", 3); print($t[-1]) }`, "array-style access for tuples is only valid for integer literals"},
	} {
		_, err := checkText(t, c.text)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: got %v, want %q", c.text, err, c.err)
		}
	}
}

// TestEmptyTuple checks (): a statement that does nothing, of no type
// as a value (bpftrace's none), its size 0.
func TestEmptyTuple(t *testing.T) {
	if _, err := checkText(t, `macro nothing() { () } begin { (); nothing(); $a = 1; $a == 1 ? print(1) : (); @s = sizeof(()) }`); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{`begin { print(()) }`, `begin { $x = () }`, `begin { @x = () }`, `begin { @x = ((), 1) }`} {
		_, err := checkText(t, text)
		if err == nil || !strings.Contains(err.Error(), "() is the empty tuple") {
			t.Errorf("%s: got %v", text, err)
		}
	}
}

// TestTypeAttributes checks __attribute__ after a struct's closing brace
// (bpftrace 0.26): packed and aligned lay it out as clang does (the
// figures are sid's bpftrace's), others that change no layout are
// accepted, the rest an error at the attribute.
func TestTypeAttributes(t *testing.T) {
	text := `struct Foo { char a; int b; long c; } __attribute__((packed));
struct Bar { char a; int b; } __attribute__((aligned(16)));
struct Baz { char a; int b; } __attribute__((__packed__, aligned(2)))
struct Qux { char a; int b; } __attribute__((deprecated));
struct Out { char a; struct Foo f; }
begin { @r = (sizeof(struct Foo), offsetof(struct Foo, b), offsetof(struct Foo, c), sizeof(struct Bar), sizeof(struct Baz), sizeof(struct Qux), offsetof(struct Out, f)) }`
	info, err := checkText(t, text)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	at := sizeofs(info)
	for off := 0; off < len(text); off++ {
		if v, ok := at[off]; ok {
			got = append(got, v)
		}
	}
	want := []uint64{13, 1, 5, 16, 6, 8, 1}
	if len(got) != len(want) {
		t.Fatalf("sizes %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("sizes %v, want %v", got, want)
			break
		}
	}
	for _, c := range []struct{ text, err string }{
		{"struct A { int a; } __attribute__((randomize_layout));\nbegin { }", "t.bt:1:36: attribute randomize_layout is not supported on struct A"},
		{"struct A { int a; } __attribute__((aligned(3)));\nbegin { }", "requested alignment 3 is not a power of 2"},
	} {
		_, err := checkText(t, c.text)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: got %v, want %q", c.text, err, c.err)
		}
	}
}
