package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mergeScript has probes on one tracepoint (three), on BEGIN (three, one
// between the others) and on END (one).
const mergeScript = `BEGIN { printf("begin 1\n") }
tracepoint:syscalls:sys_enter_getpriority /args.who == 424242/ { printf("first\n"); @n[1] = count() }
BEGIN { printf("begin 2 %s\n", probe); @b = count() }
tracepoint:syscalls:sys_enter_getpriority /args.who == 424242/ { printf("second\n"); @n[2] = count(); @n[2] = count() }
tracepoint:syscalls:sys_enter_getpriority /args.who == 424242/ { printf("third %s\n", probe); @n[3] = count() }
BEGIN { printf("begin 3\n") }
END { printf("end\n") }
`

// TestProbesShareAProgram runs probes that share attach points: each
// point's probes run as one program (-v says so, -d shows it), and their
// output comes as bpftrace's would: each event's lines in script order,
// BEGIN's in script order, the maps counted right.
func TestProbesShareAProgram(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 makes the syscalls")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "merge.st")
	if err := os.WriteFile(script, []byte(mergeScript), 0o644); err != nil {
		t.Fatal(err)
	}
	py := filepath.Join(dir, "getpriority.py")
	if err := os.WriteFile(py, []byte("import os\nfor i in range(3):\n    try:\n        os.getpriority(os.PRIO_PROCESS, 424242)\n    except OSError:\n        pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "-v", "-c", "python3 "+py, script)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, errs)
	}
	if !strings.Contains(errs, "skbtrace: 7 probes run in 3 programs: probes on one attach point share one") {
		t.Errorf("-v does not say the 7 probes run in 3 programs:\n%s", errs)
	}
	if !strings.Contains(errs, "tracing 7 probes") {
		t.Errorf("the probes are not counted one by one:\n%s", errs)
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	want := []string{"begin 1", "begin 2 BEGIN", "begin 3"}
	for range 3 {
		want = append(want, "first", "second", "third tracepoint:syscalls:sys_enter_getpriority")
	}
	want = append(want, "end")
	maps := []string{"@b: 1", "@n[1]: 3", "@n[2]: 6", "@n[3]: 3"}
	if len(lines) < len(want) || strings.Join(lines[:len(want)], "\n") != strings.Join(want, "\n") {
		t.Errorf("output:\n%s\nwant first:\n%s", out, strings.Join(want, "\n"))
	} else if got := lines[len(want):]; !slices.Equal(slices.Sorted(slices.Values(got)), maps) {
		t.Errorf("maps %q, want %q", got, maps)
	}

	code, out, errs = runCLI(t, "-d", script)
	if code != 0 {
		t.Fatalf("-d: exit %d:\n%s", code, errs)
	}
	progs := regexp.MustCompile(`(?m)^program (\S+): (.*) \(\w+, \d+ instructions`).FindAllStringSubmatch(out, -1)
	var got []string
	for _, p := range progs {
		got = append(got, p[1]+": "+p[2])
	}
	wantProgs := []string{
		"m_p0_0: BEGIN, 3 probes in one program (p0_0, p2_0, p5_0)",
		"m_p1_0: tracepoint:syscalls:sys_enter_getpriority, 3 probes in one program (p1_0, p3_0, p4_0)",
		"p6_0: END",
	}
	if strings.Join(got, "\n") != strings.Join(wantProgs, "\n") {
		t.Errorf("-d shows programs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantProgs, "\n"))
	}
}

// TestFileLimitNamed: where the process may not open as many files as the
// script's programs and links need, skbtrace says so before it loads
// anything: the limit and how many it needs.
func TestFileLimitNamed(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "many.st")
	// A probe on each syscall's entry: each its own program and link.
	if err := os.WriteFile(script, []byte("tracepoint:syscalls:sys_enter_* { @[probe] = count() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", `ulimit -n 200 && exec "$0"`, self)
	cmd.Env = append(os.Environ(), "SKBTRACE_ARGS="+strings.Join([]string{"-c", "true", script}, "\x1f"))
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1:\n%s", err, out)
	}
	re := regexp.MustCompile(`^skbtrace: the script needs about ([0-9,]+) file descriptors open at once \(\d+ maps, ([0-9,]+) programs, ([0-9,]+) links\); the limit is 200 \(RLIMIT_NOFILE, ulimit -n\): raise it, e\.g\. ulimit -n \d+`)
	m := re.FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		t.Fatalf("the error does not name the limit and the need:\n%s", out)
	}
	if m[2] != m[3] || len(m[2]) < 3 {
		t.Errorf("%s programs and %s links, want one each a syscall", m[2], m[3])
	}
	if strings.Contains(string(out), "too many open files") {
		t.Errorf("the kernel's error, not the count before loading:\n%s", out)
	}
}
