package main

import (
	"path/filepath"
	"regexp"
	"testing"
)

// inlinedInto names kernel functions that some kernel the suite boots
// inlines into a caller: a drop "in" the one is located at the other there,
// and the one may be no function to trace at all.
var inlinedInto = map[string]string{
	// Debian's 7.2 (sid, amd64 and arm64) and 7.3 (trixie-backports).
	"__udp4_lib_rcv": "udp_rcv",
}

// TestLocationsAcceptInlinedForms fails a case whose output lines name a
// function of inlinedInto (a location, FUNCTION+offset, or a hop) without
// accepting its caller as well, or that counts the function's hops with
// funcs, which takes no alternatives: such a case passes on the kernels it
// was written on and fails on those that inline.
func TestLocationsAcceptInlinedForms(t *testing.T) {
	paths, err := filepath.Glob("../cases/*.case")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no case files in ../cases (%v)", err)
	}
	for _, p := range paths {
		c, err := parseCaseFile(p)
		if err != nil {
			continue // TestCaseFiles reports it
		}
		for _, a := range c.Asserts {
			for fn, caller := range inlinedInto {
				if msg := inlinedProblem(a, fn, caller); msg != "" {
					t.Errorf("%s:%d: %s: %s", p, a.Line, a, msg)
				}
			}
		}
	}
}

// inlinedProblem says what is wrong with a's naming fn, which some kernels
// inline into caller ("" if nothing).
func inlinedProblem(a assert, fn, caller string) string {
	switch a.Kind {
	case "stdout", "stderr":
		// A location (fn+0x...) or a hop of fn: where fn is inlined, the
		// location is in caller and the hop is caller's.
		src := a.Re.String()
		if namesWord(src, fn) && !namesWord(src, caller) {
			return fn + " is inlined into " + caller + " on some kernels: accept both, (" + fn + "|" + caller + ")"
		}
	case "funcs":
		for _, f := range a.Funcs {
			if f == fn {
				return fn + " is inlined into " + caller + " on some kernels, which then have no " + fn + " to trace"
			}
		}
	}
	return ""
}

// namesWord reports whether the regular expression's text src names the
// identifier name, not as part of a longer one.
func namesWord(src, name string) bool {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(name) + `([^A-Za-z0-9_]|$)`).MatchString(src)
}

func TestInlinedProblem(t *testing.T) {
	for _, tc := range []struct {
		line string
		bad  bool
	}{
		{`stdout /^@location\[__udp4_lib_rcv\+0x[0-9a-f]+\]: 3$/ 1`, true},
		{`stdout /^@location\[(__udp4_lib_rcv|udp_rcv)\+0x[0-9a-f]+\]: 3$/ 1`, false},
		{`stdout /^  where  (udp_rcv|__udp4_lib_rcv)\+0x[0-9a-f]+$/ 1`, false},
		{`stdout /^        __udp4_lib_rcv\+\d+$/ 2`, true},
		{`stdout / udp_rcv +len=21 dev=lo$/ 2`, false},
		{`stdout /^@drops\[NO_SOCKET, (__udp4_lib_rcv|ip_rcv)\+0x[0-9a-f]+, lo/ 1`, true},
		{`stdout / __udp4_lib_rcv +len=21 dev=lo$/ 2`, true},
		{`funcs 2 ip_rcv __udp4_lib_rcv`, true},
		{`funcs 2 ip_rcv udp_rcv`, false},
	} {
		c := &testCase{}
		if err := c.parseLine(1, tc.line); err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		msg := inlinedProblem(c.Asserts[0], "__udp4_lib_rcv", "udp_rcv")
		if (msg != "") != tc.bad {
			t.Errorf("%s: problem %q, want one: %v", tc.line, msg, tc.bad)
		}
	}
}
