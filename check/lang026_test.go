package check_test

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/lang"
)

// checkText parses and checks a script against the kernel's BTF.
func checkText(t *testing.T, text string) (*check.Info, error) {
	t.Helper()
	s, err := lang.Parse(&lang.Source{Name: "t.bt", Text: text})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return check.Check(s, check.Options{BTF: kernelBTF(t)})
}

// TestScriptTypes checks the C types a script defines: laid out as C
// lays them out, read through a cast, sizeof and offsetof; enumerators
// are constants.
func TestScriptTypes(t *testing.T) {
	text := `
struct Foo { int a; char b[10]; unsigned long c; u16 d; int e : 3, f : 5; struct Foo *next; struct sock *sk; }
union U { char c; long l; int a[3]; }
enum { A = 1, B, C = 10 }
begin {
  $f = (struct Foo *)0;
  @s = sizeof(struct Foo); @u = sizeof(union U); @o = offsetof(struct Foo, c);
  @b = $f->b[2]; @n = $f->next->a; @k = $f->sk->__sk_common.skc_family; @e = $f->f;
  @v = A + B + C;
}`
	info, err := checkText(t, text)
	if err != nil {
		t.Fatal(err)
	}
	var foo *btf.Struct
	for _, mem := range info.Members {
		if st, ok := btf.UnderlyingType(mem.BTF).(*btf.Pointer); ok {
			if s, ok := st.Target.(*btf.Struct); ok && s.Name == "Foo" {
				foo = s
			}
		}
	}
	if foo == nil {
		t.Fatal("no member read through struct Foo")
	}
	offsets := map[string]btf.Bits{}
	for _, m := range foo.Members {
		offsets[m.Name] = m.Offset
	}
	want := map[string]btf.Bits{"a": 0, "b": 32, "c": 128, "d": 192, "e": 208, "f": 211, "next": 256, "sk": 320}
	for n, off := range want {
		if offsets[n] != off {
			t.Errorf("struct Foo: %s at bit %d, want %d", n, offsets[n], off)
		}
	}
	if foo.Size != 48 {
		t.Errorf("struct Foo is %d bytes, want 48", foo.Size)
	}
	consts := map[int64]bool{}
	for _, k := range info.Consts {
		consts[int64(k.Int)] = true
	}
	for _, v := range []int64{48, 16, 16, 1, 2, 10} {
		if !consts[v] {
			t.Errorf("no constant %d (sizeof, offsetof, enumerators): %v", v, consts)
		}
	}
	for _, c := range []struct{ text, err string }{
		{"struct Foo { bogus_t a; }\nbegin { }", `t.bt:1:14: unknown type "bogus_t"`},
		{"struct Foo { int a; }\nstruct Foo { int b; }\nbegin { }", "t.bt:2:8: struct Foo is defined twice"},
		{"struct Foo { int a; }\nbegin { $f = (struct Foo *)0; @x = $f->b }", `unknown field "b"`},
	} {
		if _, err := checkText(t, c.text); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: got %v, want %s", c.text, err, c.err)
		}
	}
}

// TestMapDecls checks map declarations against the maps' use.
func TestMapDecls(t *testing.T) {
	info, err := checkText(t, "let @a = lruhash(2);\nlet @c = percpuhash(5);\nlet @z = hash(3);\nbegin { @a[1] = 1; @c[1] = count() }")
	if err != nil {
		t.Fatal(err)
	}
	if d := info.MapDecls["a"]; d == nil || d.Type != "lruhash" || d.Max != 2 {
		t.Errorf("@a declared %+v", d)
	}
	if len(info.Notes) != 1 || !strings.Contains(info.Notes[0], "WARNING: Unused map: @z") {
		t.Errorf("notes %q", info.Notes)
	}
	for _, c := range []struct{ text, err string }{
		{"let @a = percpuhash(2);\nbegin { @a[1] = 5 }", "t.bt:1:10: @a holds"},
		{"let @a = percpuarray(2);\nbegin { @a[1] = count() }", "t.bt:1:10: @a has keys"},
	} {
		if _, err := checkText(t, c.text); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: got %v, want %s", c.text, err, c.err)
		}
	}
}

// TestSizeofTuple checks sizeof of a tuple: its elements laid out as a C
// struct's.
func TestSizeofTuple(t *testing.T) {
	info, err := checkText(t, `begin { @a = sizeof(((uint8)1, (uint64)2)); @b = sizeof(((uint32)1, (uint32)2)); @c = sizeof(("abc", (uint8)1)) }`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint64]bool{}
	for e, k := range info.Consts {
		if _, ok := e.(*lang.TypeOfExpr); ok {
			got[k.Int] = true
		}
	}
	for _, want := range []uint64{16, 8, 5} {
		if !got[want] {
			t.Errorf("no sizeof of %d: %v", want, got)
		}
	}
}

// TestUnstableConfig checks bpftrace 0.26's unstable feature variables:
// accepted, and unstable_map_decl = error turns map declarations off.
func TestUnstableConfig(t *testing.T) {
	if _, err := checkText(t, "config = { unstable_map_decl = enable; unstable_tseries = warn; unstable_addr = enable; unstable_macro = enable; unstable_import = error }\nlet @a = hash(2);\nbegin { @a[1] = 1 }"); err != nil {
		t.Fatal(err)
	}
	_, err := checkText(t, "config = { unstable_map_decl = error }\nlet @a = hash(2);\nbegin { @a[1] = 1 }")
	if err == nil || !strings.Contains(err.Error(), "t.bt:2:1: map declarations are turned off") {
		t.Errorf("got %v", err)
	}
}

// TestArrayIndexBounds checks a constant index past an array's end.
func TestArrayIndexBounds(t *testing.T) {
	_, err := checkText(t, "struct A { int x[4]; }\nbegin { $a = (struct A *)curtask; $x = $a->x[5] }")
	if err == nil || !strings.Contains(err.Error(), "the index 5 is out of bounds for array of size 4") {
		t.Errorf("got %v", err)
	}
	if _, err := checkText(t, "struct A { int x[4]; }\nbegin { $a = (struct A *)curtask; $x = $a->x[3] }"); err != nil {
		t.Error(err)
	}
}
