package lang

import "testing"

// TestIntLiterals checks bpftrace's integer literals: durations in
// nanoseconds, `_` separators, C's suffixes, octal, hex and exponents.
func TestIntLiterals(t *testing.T) {
	cases := []struct {
		lit  string
		want uint64
	}{
		{"100ms", 100e6}, {"1s", 1e9}, {"2us", 2000}, {"7ns", 7}, {"1m", 60e9}, {"2h", 7200e9}, {"1d", 86400e9},
		{"1_000_123_000", 1000123000}, {"0x1_0", 16}, {"123UL", 123}, {"123U", 123}, {"123LL", 123}, {"0xffULL", 255},
		{"0123", 83}, {"2e3", 2000}, {"0", 0},
	}
	for _, c := range cases {
		s, err := Parse(&Source{Name: "t.bt", Text: "begin { @x = " + c.lit + " }"})
		if err != nil {
			t.Errorf("%s: %v", c.lit, err)
			continue
		}
		a := s.Probes[0].Body.Stmts[0].(*AssignStmt)
		lit, ok := a.Value.(*IntLit)
		if !ok || lit.Value != c.want {
			t.Errorf("%s: got %#v, want %d", c.lit, a.Value, c.want)
		}
	}
	if _, err := Parse(&Source{Name: "t.bt", Text: "begin { @x = 30000000000000d }"}); err == nil {
		t.Errorf("an overflowing duration parsed")
	}
}
