package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	aliases := kernelAliases(t)
	for _, p := range paths {
		c, err := parseCaseFile(p)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if len(c.Asserts) == 0 {
			t.Errorf("%s: no assertions", p)
		}
		conds := []*cond{c.Kernels}
		for _, a := range c.Asserts {
			conds = append(conds, a.Cond)
		}
		for _, k := range conds {
			for _, l := range condLabels(k) {
				if !aliases[l] {
					t.Errorf("%s: label %q in [%s] is not a short name of kernels.sh (%v): a typo? (a feature, an architecture or a version comparison is not a label)",
						p, l, k, sortedKeys(aliasCounts(aliases)))
				}
			}
		}
	}
}

// kernelAliases reads the short names of kernel specs from kernels.sh: the
// labels a case of the suite may name.
func kernelAliases(t *testing.T) map[string]bool {
	b, err := os.ReadFile("../kernels.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]bool{}
	for _, s := range regexp.MustCompile(`(?m)^\s*([0-9][0-9A-Za-z.-]*)\) s=`).FindAllStringSubmatch(string(b), -1) {
		m[s[1]] = true
	}
	for _, want := range []string{"5.10", "6.1", "6.12", "6.12-arm64"} {
		if !m[want] {
			t.Fatalf("kernels.sh has no short name %s (read %v)", want, m)
		}
	}
	return m
}

func aliasCounts(m map[string]bool) map[string]int {
	c := map[string]int{}
	for k := range m {
		c[k] = 1
	}
	return c
}

// condLabels are the labels a condition names.
func condLabels(c *cond) []string {
	if c == nil {
		return nil
	}
	var l []string
	for _, alt := range c.Alts {
		for _, t := range alt {
			if t.Kind == "label" {
				l = append(l, t.Name)
			}
		}
	}
	return l
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
post vmtool pcapcheck /tmp/x.pcapng 9
timeout 30
exit 0
stdout /len=4\d/ 2
[6.12] stderr /a/b/ 1
funcs 2 ip_rcv ip_rcv_core
attached skb:ip_rcv*
`, check: func(t *testing.T, c *testCase) {
			if c.Run != `skbtrace -e 'skb:ip_rcv { print(len) }'` || c.Setup != "ip link set lo up" || c.Signal != "TERM" ||
				c.Timeout.Seconds() != 30 || c.Post != "vmtool pcapcheck /tmp/x.pcapng 9" || c.Until == nil || c.Until.N != 2 || !runsOn(t, c, "6.12") || runsOn(t, c, "6.1") {
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
		{name: "conditions", text: `kernels >=5.17,!arm64 6.12-arm64
run x
[6.1] exit 0
[>=6.12 <5.11] stdout /a/ 1
[kprobe-multi] stderr /kprobe-multi/ 1
[!kprobe-multi,amd64] stderr /fentry/ 1
[btf:sk_skb_reason_drop] funcs 2 sk_skb_reason_drop
[ 6.12 ]  attached skb:ip_rcv*
`, check: func(t *testing.T, c *testCase) {
			want := []string{"[6.1] exit 0", "[>=6.12 <5.11] stdout /a/ 1", "[kprobe-multi] stderr /kprobe-multi/ 1",
				"[!kprobe-multi,amd64] stderr /fentry/ 1", "[btf:sk_skb_reason_drop] funcs 2 sk_skb_reason_drop", "[6.12] attached skb:ip_rcv*"}
			if len(c.Asserts) != len(want) {
				t.Fatalf("%d assertions, want %d", len(c.Asserts), len(want))
			}
			for i, a := range c.Asserts {
				if a.String() != want[i] {
					t.Errorf("assertion %d = %q, want %q", i, a, want[i])
				}
			}
			if c.Kernels.Text != ">=5.17,!arm64 6.12-arm64" {
				t.Errorf("kernels %q", c.Kernels.Text)
			}
			on := func(label, arch, rel string) bool {
				ok, err := c.runsOn(&kernelEnv{Label: label, Arch: arch, Release: rel})
				if err != nil {
					t.Fatal(err)
				}
				return ok
			}
			if !on("6.1", "amd64", "6.1.0-37-amd64") || on("5.10", "amd64", "5.10.0-32-amd64") ||
				on("x", "arm64", "6.12.95+deb12-arm64") || !on("6.12-arm64", "arm64", "6.12.95+deb12-arm64") {
				t.Error("kernels >=5.17,!arm64 6.12-arm64: wrong choice")
			}
		}},
		{name: "no run", text: "exit 0\n", err: "no run line"},
		{name: "bad version", text: "run x\n[>=6.x] exit 0\n", err: `">=6.x": a version comparison is >=`},
		{name: "bad operator", text: "run x\n[=>6.1] exit 0\n", err: "a version comparison"},
		{name: "lone not", text: "run x\n[!] exit 0\n", err: "an empty term"},
		{name: "empty term", text: "run x\n[6.1,] exit 0\n", err: "an empty term"},
		{name: "empty cond", text: "run x\n[] exit 0\n", err: "an empty kernel condition"},
		{name: "bad btf", text: "run x\n[btf:a-b] exit 0\n", err: "btf:NAME"},
		{name: "bad traceable", text: "run x\n[traceable:] exit 0\n", err: "traceable:NAME"},
		{name: "bad label", text: "run x\n[6.1*] exit 0\n", err: "is not a label"},
		{name: "bad kernels", text: "kernels\nrun x\n", err: "kernels: an empty kernel condition"},
		{name: "cond on kernels", text: "[6.1] kernels 6.1\nrun x\n", err: "applies to assertions only"},
		{name: "unclosed", text: "run x\n[6.1 exit 0\n", err: "[COND] not closed"},
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

func runsOn(t *testing.T, c *testCase, label string) bool {
	ok, err := c.runsOn(&kernelEnv{Label: label})
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestCondHolds(t *testing.T) {
	btf := map[string]bool{"sk_skb_reason_drop": true}
	e612 := &kernelEnv{Label: "6.12", Arch: "amd64", Release: "6.12.38+deb12-amd64",
		Features:  map[string]bool{"kprobe-multi": true, "kprobes": true, "drop-reasons": true},
		BTF:       func(n string) bool { return btf[n] },
		Traceable: func(n string) bool { return n == "bpf_ringbuf_output" }}
	arm := &kernelEnv{Label: "trixie/arm64", Arch: "arm64", Release: "6.12.57+deb13-arm64",
		Features: map[string]bool{"kprobe-multi": false, "kprobes": true, "drop-reasons": true}}
	e510 := &kernelEnv{Label: "5.10", Arch: "amd64", Release: "5.10.0-32-amd64",
		Features: map[string]bool{"kprobe-multi": false, "kprobes": true, "drop-reasons": false}}
	tests := []struct {
		cond string
		env  *kernelEnv
		want bool
		err  string
	}{
		{"6.12", e612, true, ""},
		{"6.1", e612, false, ""},
		{"6.1 6.12", e612, true, ""},
		{"trixie/arm64", arm, true, ""},
		{"trixie", arm, false, ""},
		{"!6.12", e612, false, ""},
		{">=6.12", e612, true, ""},
		{">6.12", e612, false, ""},
		{">6.11", e612, true, ""},
		{"=6.12", e612, true, ""},
		{"=6", e612, true, ""},
		{"=6.12.38", e612, true, ""},
		{"<6.12.39", e612, true, ""},
		{"<=6.11", e612, false, ""},
		{">=5.17,<6.3", e612, false, ""},
		{">=5.17,<6.3", &kernelEnv{Release: "6.1.0-37-amd64"}, true, ""},
		{"<5.17", e510, true, ""},
		{"=5.10", e510, true, ""},
		{"amd64", e612, true, ""},
		{"arm64", e612, false, ""},
		{"!amd64", arm, true, ""},
		{"kprobe-multi", e612, true, ""},
		{"kprobe-multi", arm, false, ""},
		{"!kprobe-multi,amd64", e510, true, ""},
		{"!kprobe-multi,amd64", arm, false, ""},
		{"!kprobe-multi,amd64 arm64", arm, true, ""},
		{"drop-reasons", e510, false, ""},
		{"kprobes", arm, true, ""},
		{"btf:sk_skb_reason_drop", e612, true, ""},
		{"btf:kfree_skb_reason", e612, false, ""},
		{"!btf:kfree_skb_reason", e612, true, ""},
		{"btf:sk_skb_reason_drop", arm, false, "BTF is not known here"},
		{"traceable:bpf_ringbuf_output", e612, true, ""},
		{"traceable:udp_rcv", e612, false, ""},
		{"amd64,!traceable:udp_rcv", e612, true, ""},
		{"traceable:bpf_ringbuf_output", arm, false, "traceable functions are not known here"},
		{"kprobe-multi", &kernelEnv{Label: "6.12"}, false, "feature kprobe-multi is not known here"},
		{">=6.1", &kernelEnv{Release: "x"}, false, "no kernel version"},
		// Alternatives are decided left to right: one that holds before
		// one that is not known is enough.
		{"6.12 kprobe-multi", &kernelEnv{Label: "6.12"}, true, ""},
	}
	for _, tt := range tests {
		c, err := parseCond(tt.cond)
		if err != nil {
			t.Fatalf("%s: %v", tt.cond, err)
		}
		got, err := c.holds(tt.env)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("[%s] on %s: error %v, want one containing %q", tt.cond, tt.env.Label, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("[%s] on %s %s: %v %v, want %v", tt.cond, tt.env.Label, tt.env.Release, got, err, tt.want)
		}
	}
	var none *cond
	if ok, err := none.holds(e510); !ok || err != nil {
		t.Errorf("no condition: %v %v", ok, err)
	}
}

func TestReleaseVersion(t *testing.T) {
	for rel, want := range map[string]string{
		"6.12.38+deb12-amd64": "[6 12 38]", "5.10.0-32-amd64": "[5 10 0]", "6.1.0-37-arm64": "[6 1 0]",
		"7.2.13+deb14-amd64": "[7 2 13]", "6.13-rc1": "[6 13]", "6.13": "[6 13]", "x": "[]", "": "[]",
	} {
		if got := fmt.Sprint(releaseVersion(rel)); got != want {
			t.Errorf("releaseVersion(%q) = %s, want %s", rel, got, want)
		}
	}
}

func TestEnvLine(t *testing.T) {
	e := &kernelEnv{Label: "6.12-arm64", Arch: "arm64", Release: "6.12.95+deb12-arm64",
		Features: map[string]bool{"kprobe-multi": false, "kprobes": true, "drop-reasons": true}}
	line := e.String()
	if line != "VMENV label=6.12-arm64 arch=arm64 release=6.12.95+deb12-arm64 features=drop-reasons,kprobes" {
		t.Fatalf("String: %q", line)
	}
	back, ok := parseEnvLine(line)
	if !ok || back.String() != line || back.Features["kprobe-multi"] || len(back.Features) != len(features) {
		t.Fatalf("parseEnvLine(%q) = %+v, %v", line, back, ok)
	}
	if _, ok := parseEnvLine("VMENV label=x"); ok {
		t.Error("a short VMENV line parsed")
	}
	none := &kernelEnv{Label: "x", Features: map[string]bool{"kprobes": false}}
	if s := none.String(); !strings.HasSuffix(s, " features=-") {
		t.Errorf("no features: %q", s)
	}
}

func TestRecheckEnv(t *testing.T) {
	dir := t.TempDir()
	cp, lp := filepath.Join(dir, "c.case"), filepath.Join(dir, "log")
	os.WriteFile(cp, []byte("run x\nexit 0\n[kprobe-multi] stdout /a/ 1\n[!kprobe-multi] stdout /a/ 2\n[btf:x] stdout /a/ 3\n"), 0o644)
	os.WriteFile(lp, []byte("VMENV label=6.1 arch=amd64 release=6.1.0-37-amd64 features=kprobes\n=== RUN c [6.1]\n  stdout| a\n  stdout| a\nok    exit 0\n"), 0o644)
	var b strings.Builder
	if rc := recheck(&b, "6.1", cp, lp); rc != 0 {
		t.Errorf("recheck: %d\n%s", rc, b.String())
	}
	want := "ok    exit 0\nok    [!kprobe-multi] stdout /a/ 2\nskip  line 5: [btf:x] stdout /a/ 3: the kernel's BTF is not known here (btf:x)\n"
	if b.String() != want {
		t.Errorf("recheck said\n%s\nwant\n%s", b.String(), want)
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
