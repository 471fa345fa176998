package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCaseFiles parses every case of the suite, so a malformed case fails
// `make test` on the host instead of a VM run minutes later.
func TestCaseFiles(t *testing.T) {
	paths, err := filepath.Glob("../cases/*.case")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no case files in ../cases (%v)", err)
	}
	for _, p := range paths {
		c, err := parseCaseFile(p)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if len(c.Asserts) == 0 {
			t.Errorf("%s: no assertions", p)
		}
		for _, k := range c.Kernels {
			if k != "6.1" && k != "6.12" {
				t.Errorf("%s: kernel %q is not one run.sh boots", p, k)
			}
		}
	}
}

func TestParseCase(t *testing.T) {
	tests := []struct {
		name, text, err string
		check           func(t *testing.T, c *testCase)
	}{
		{name: "full", text: `# a comment
kernels 6.12
setup ip link set lo up
run skbtrace -e 'skb:ip_rcv { print(len) }'
traffic vmtool send 127.0.0.1:9
until / ip_rcv / 2
signal TERM
timeout 30
exit 0
stdout /len=4\d/ 2
[6.12] stderr /a/b/ 1
funcs 2 ip_rcv ip_rcv_core
attached skb:ip_rcv*
`, check: func(t *testing.T, c *testCase) {
			if c.Run != `skbtrace -e 'skb:ip_rcv { print(len) }'` || c.Setup != "ip link set lo up" || c.Signal != "TERM" ||
				c.Timeout.Seconds() != 30 || c.Until == nil || c.Until.N != 2 || !c.runsOn("6.12") || c.runsOn("6.1") {
				t.Errorf("parsed %+v", c)
			}
			want := []string{"exit 0", "stdout /len=4\\d/ 2", "[6.12] stderr /a/b/ 1", "funcs 2 ip_rcv ip_rcv_core", "attached skb:ip_rcv*"}
			if len(c.Asserts) != len(want) {
				t.Fatalf("%d assertions, want %d", len(c.Asserts), len(want))
			}
			for i, a := range c.Asserts {
				if a.String() != want[i] {
					t.Errorf("assertion %d = %q, want %q", i, a, want[i])
				}
			}
		}},
		{name: "no run", text: "exit 0\n", err: "no run line"},
		{name: "bad count", text: "run x\nstdout /a/ many\n", err: "t.case:2: stdout: count \"many\""},
		{name: "bad regexp", text: "run x\nstdout /(/ 1\n", err: "missing closing )"},
		{name: "unknown", text: "run x\nexpect 1\n", err: `unknown directive "expect"`},
		{name: "kernel on a directive", text: "[6.1] run x\n", err: "applies to assertions only"},
		{name: "signal alone", text: "run x\nsignal INT\n", err: "signal without traffic"},
		{name: "bad signal", text: "run x\ntraffic y\nsignal HUP\n", err: "INT or TERM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "t.case")
			if err := os.WriteFile(p, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := parseCaseFile(p)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestFuncCountsAndCheck(t *testing.T) {
	r := &run{Exit: 0, Stdout: []string{
		"07:54:05.475208   0 0xff14b8eebd2acd00 ip_output                len=41 dev=",
		"07:54:05.475386   0 0xff14b8eebd2acd00 __dev_queue_xmit         len=55 dev=lo",
		"07:54:05.575208   0 0xff14b8eebd2ac700 ip_output                len=41 dev=",
		"@r[8]: 4",
	}}
	tests := []struct {
		line, want string
	}{
		{"funcs 2 ip_output", ""},
		{"funcs 1 __dev_queue_xmit", ""},
		{"funcs 2 *", "seen __dev_queue_xmit:1"},
		{"funcs 2 ip_rcv", "seen ip_rcv:0"},
		{"stdout / ip_output +len=41 dev=$/ 2", ""},
		{"stdout /^@r\\[8\\]: 4$/ 2", "1 lines match"},
		{"exit 1", "exit status 0"},
	}
	for _, tt := range tests {
		c := &testCase{}
		if err := c.parseLine(1, tt.line); err != nil {
			t.Fatalf("%s: %v", tt.line, err)
		}
		if got := r.check(c.Asserts[0]); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.line, got, tt.want)
		}
	}
}
