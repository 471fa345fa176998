package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/skbtrace/skbtrace/runtime/session"
)

// TestDetachInBackground: a session on every syscall-entry tracepoint (360
// or so classic tracepoints, whose links the kernel takes seconds to close)
// prints its map and returns while a helper process closes the links; once
// the helper is gone, none of the session's programs is left in the kernel.
func TestDetachInBackground(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/tracing/events/syscalls"); err != nil {
		t.Skipf("no syscall tracepoints (CONFIG_FTRACE_SYSCALLS off): %v", err)
	}
	t.Setenv(session.DetachEnv, "")
	before := countPrograms()
	code, out, errs := runCLI(t, "-v", "-e", "tracepoint:syscalls:sys_enter_* { @ = count() }", "-c", "true")
	// A bpftrace program: its maps at exit after two newlines.
	if code != 0 || !regexp.MustCompile(`^\n\n@: \d+\n$`).MatchString(out) {
		t.Fatalf("exit %d, stdout %q, want the count:\n%s", code, out, errs)
	}
	m := regexp.MustCompile(`detaching (\d+) links in the background \(pid (\d+), ` + session.DetachHelperName + `\)`).FindStringSubmatch(errs)
	if m == nil {
		t.Fatalf("-v does not say the links were handed to a helper:\n%s", errs)
	}
	if n, _ := strconv.Atoi(m[1]); n < 128 {
		t.Errorf("%d links handed over, want every tracepoint's", n)
	}
	// The helper is this test binary (TestMain), named for ps.
	pid := m[2]
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + pid + "/cmdline")
		if argv0, _, _ := strings.Cut(string(b), "\x00"); err != nil || argv0 != session.DetachHelperName {
			break // gone (or its pid reused by another process)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the helper %s still runs after 2 minutes", pid)
		}
	}
	// Programs go with their last link; the kernel frees them soon after.
	for deadline := time.Now().Add(30 * time.Second); countPrograms() > before; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d programs in the kernel after the helper ended, %d before", countPrograms(), before)
		}
	}
}

// countPrograms counts the BPF programs loaded in the kernel.
func countPrograms() int {
	n := 0
	for id := ebpf.ProgramID(0); ; n++ {
		next, err := ebpf.ProgramGetNextID(id)
		if err != nil {
			return n
		}
		id = next
	}
}
