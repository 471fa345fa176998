package main

import (
	"slices"
	"testing"
)

// TestJoinDebugStage checks how -d's value is told from the script:
// bpftrace's stage names (and words that are no file, tool or flag) are
// its value, anything else leaves -d bare, skbtrace's dump.
func TestJoinDebugStage(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"-d", "ast", "-e", "x"}, []string{"--dump=ast", "-e", "x"}},
		{[]string{"-d", "ast,verifier", "f.bt"}, []string{"--dump=ast,verifier", "f.bt"}},
		{[]string{"--debug", "all", "f.bt"}, []string{"--dump=all", "f.bt"}},
		{[]string{"--debug=types", "f.bt"}, []string{"--dump=types", "f.bt"}},
		{[]string{"-d", "bogus", "-e", "x"}, []string{"--dump=bogus", "-e", "x"}},
		{[]string{"-d", "-e", "x"}, []string{"-d", "-e", "x"}},
		{[]string{"-d", "script.bt"}, []string{"-d", "script.bt"}},
		{[]string{"-d", "tcpdrop"}, []string{"-d", "tcpdrop"}},
		{[]string{"-e", "x", "--", "-d", "ast"}, []string{"-e", "x", "--", "-d", "ast"}},
	} {
		if got := joinDebugStage(c.in); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
	if _, err := parseDebugStages("ast,nope"); err == nil {
		t.Error("ast,nope accepted")
	}
	st, err := parseDebugStages("all")
	if err != nil || !st.has("verifier") || !st.has("ast") {
		t.Errorf("all: %v %v", st, err)
	}
	if st, _ := parseDebugStages(dumpAll); st.has("ast") {
		t.Error("skbtrace's dump is no stage")
	}
}
