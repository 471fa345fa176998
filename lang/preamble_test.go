package lang

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestPreamble checks the preamble's items: map declarations, C struct,
// union and enum definitions, between and before the probes.
func TestPreamble(t *testing.T) {
	text := `#include <linux/socket.h>
struct Foo {
  unsigned int a;
  char b[10], *c;
  struct sock *sk; u32 bits : 3;
};
let @a = lruhash(100);
let @b = percpuhash(2)
enum { A = 1, B, C = -4, D };
enum Color { RED, GREEN = RED };
begin { print(A) }
let @c = hash(1_000);
`
	s, err := Parse(&Source{Name: "t.bt", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	var decls []string
	for _, d := range s.MapDecls {
		decls = append(decls, d.Name+"="+d.Type+"("+itoa(d.Max)+")")
	}
	if want := []string{"a=lruhash(100)", "b=percpuhash(2)", "c=hash(1000)"}; !reflect.DeepEqual(decls, want) {
		t.Errorf("map declarations %v, want %v", decls, want)
	}
	if len(s.Types) != 3 || len(s.Probes) != 1 {
		t.Fatalf("%d types, %d probes", len(s.Types), len(s.Probes))
	}
	foo := s.Types[0]
	var fields []string
	for _, f := range foo.Fields {
		fields = append(fields, f.Type+strings.Repeat("*", f.Ptr)+" "+f.Name+dims(f.Dims)+bits(f.Bits))
	}
	if want := []string{"unsigned int a", "char b[10]", "char* c", "struct sock* sk", "u32 bits:3"}; foo.Kind != "struct" || foo.Name != "Foo" || !reflect.DeepEqual(fields, want) {
		t.Errorf("struct %s %s: %v, want %v", foo.Kind, foo.Name, fields, want)
	}
	var values []string
	for _, e := range s.Types[1:] {
		for _, v := range e.Values {
			values = append(values, e.Name+"."+v.Name+"="+itoa(uint64(v.Value)))
		}
	}
	if want := []string{".A=1", ".B=2", ".C=" + itoa(uint64(0xfffffffffffffffc)), ".D=" + itoa(uint64(0xfffffffffffffffd)), "Color.RED=0", "Color.GREEN=0"}; !reflect.DeepEqual(values, want) {
		t.Errorf("enum values %v, want %v", values, want)
	}
	for _, c := range []struct{ text, err string }{
		{"let @a = bogus(1);\nbegin { }", `t.bt:1:10: unknown map type "bogus"`},
		{"let @a = hash();\nbegin { }", "t.bt:1:15: a map declaration takes one argument"},
		{"struct Foo { int a int b; }\nbegin { }", `expected ";" after member a, got "int"`},
		{"struct Foo { int a[x]; }\nbegin { }", "expected an array length"},
		{"struct { int a; }\nbegin { }", "an anonymous struct cannot be used"},
		{"typedef int foo;\nbegin { }", "typedef is not supported"},
		{"macro f(x) { x }\nbegin { f(1, 2) }", "t.bt:2:9: macro f takes 1 arguments, got 2"},
		{"macro f($x) { $x = 2; }\nbegin { f(1) }", "t.bt:2:11: macro f expects a scratch variable for $x"},
		{"macro f(@m) { @m }\nbegin { f($x) }", "macro f expects a map for @m"},
		{"macro f() { @x++ }\nbegin { f() }", "t.bt:1:13: macro f uses @x, which is not one of its parameters"},
		{"macro f() { f() }\nbegin { f() }", "macro f expands too deeply"},
	} {
		_, err := Parse(&Source{Name: "t.bt", Text: c.text})
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: got %v, want %s", c.text, err, c.err)
		}
	}
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }

func dims(ds []int) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("[" + itoa(uint64(d)) + "]")
	}
	return b.String()
}

func bits(n int) string {
	if n == 0 {
		return ""
	}
	return ":" + itoa(uint64(n))
}

// TestMacros checks what a macro call expands to: hygiene (its own
// variables renamed), variables and maps passed by name, expressions put
// where the parameter is named.
func TestMacros(t *testing.T) {
	cases := []struct{ macros, sugar, plain string }{
		{`macro add_one(x) { x + 1 }`, `begin { $y = add_one($a * 2) }`, `begin { $y = $a * 2 + 1 }`},
		{`macro inc($x) { $y = $x + 1; $z = $x + 2; $y + $z }`, `begin { $y = 2; print(inc({ $y += 1; $y })) }`,
			`begin { $y = 2; $y += 1; $__inc1_y = $y + 1; $y += 1; $__inc1_z = $y + 2; print($__inc1_y + $__inc1_z) }`},
		{`macro one() { 1 }`, `begin { $y = one + one() }`, `begin { $y = 1 + 1 }`},
		{`macro inc($a, @b) { $a += 1; @b += 1; }`, `begin { inc($x, @m) }`, `begin { { $x += 1; @m += 1 } }`},
		{`macro once(x) { let $x = x; $x + 1 }`, `begin { $y = once(5) }`, `begin { let $__once1_x = 5; $y = $__once1_x + 1 }`},
		{`macro add_one(x) { x + 1 } macro add_two(x) { add_one(x) + 1 }`, `begin { $y = add_two(3) }`, `begin { $y = 3 + 1 + 1 }`},
	}
	for _, c := range cases {
		if got, want := treeShape(t, c.macros+"\n"+c.sugar), treeShape(t, c.plain); got != want {
			t.Errorf("%s %s:\n%s\nwant (%s):\n%s", c.macros, c.sugar, got, c.plain, want)
		}
	}
}
