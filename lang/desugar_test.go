package lang

import (
	"regexp"
	"strings"
	"testing"
)

var dumpSpans = regexp.MustCompile(`\s+\[\d+:\d+-\d+:\d+\]`)

// treeShape is a script's tree as Dump prints it, without positions.
func treeShape(t *testing.T, text string) string {
	t.Helper()
	s, err := Parse(&Source{Name: "t.bt", Text: text})
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	var b strings.Builder
	Dump(&b, s)
	return dumpSpans.ReplaceAllString(b.String(), "")
}

// TestDesugar checks that block expressions, if expressions and ++/--
// inside expressions parse to the statements they mean.
func TestDesugar(t *testing.T) {
	cases := []struct{ sugar, plain string }{
		{`begin { $y = $x++ }`, `begin { $__sugar1 = $x; $x += 1; $y = $__sugar1 }`},
		{`begin { $y = --$x }`, `begin { $x -= 1; $y = $x }`},
		{`begin { @m[1]++ }`, `begin { @m[1] += 1 }`},
		{`begin { let $a = { let $b = 1; $b + 5 } }`, `begin { let $b = 1; let $a = $b + 5 }`},
		{`begin { $e = if ($c) { 7 } else { 8 } }`, `begin { $e = $c ? 7 : 8 }`},
		{`begin { $e = if ($c) { $d = 1; 7 } else { 8 } }`, `begin { if ($c) { $d = 1; $__sugar1 = 7 } else { $__sugar1 = 8 } $e = $__sugar1 }`},
		{`begin { $c ? printf("a") : printf("b") }`, `begin { if ($c) { printf("a") } else { printf("b") } }`},
		{`begin { { printf("a") } }`, `begin { { printf("a") } }`},
		{`begin { print({ $a = 1; $a }) }`, `begin { $a = 1; print($a) }`},
		{`macro m(x) { x; x; } begin { $a = 1; m($a) }`, `begin { $a = 1; { } }`},
		{`tracepoint:a:b /{ $a = 1; $a }/ { print(1) }`, `tracepoint:a:b { $a = 1; if ($a) { print(1) } }`},
	}
	for _, c := range cases {
		if got, want := treeShape(t, c.sugar), treeShape(t, c.plain); got != want {
			t.Errorf("%s:\n%s\nwant (%s):\n%s", c.sugar, got, c.plain, want)
		}
	}
	for _, bad := range []string{
		`begin { while ($i++ < 3) { } }`,
		`begin { $x = { $a = 1; } }`,
		`begin { $x = if ($a) { 1 } }`,
		`begin { $x = 1++ }`,
	} {
		if _, err := Parse(&Source{Name: "t.bt", Text: bad}); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
