package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/internal/bpfprogtest"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// TestBPFHopsNote checks --filter on a kernel that refuses fentry on BPF
// programs (this host): with a tc program with BTF loaded, one line on
// stderr names it and says why it is not a hop, and the trace goes on
// (exit 0); --bpf-hops=false says nothing of it.
func TestBPFHopsNote(t *testing.T) {
	if err := session.ProbeBPFTrace(); err == nil {
		t.Skip("fentry on BPF programs works here: the VM suite's bpf-hops cases cover it")
	}
	name := testProgName("hopn")
	loadTestProg(t, bpfprogtest.TCDropPort(name, 9))
	for _, flags := range [][]string{nil, {"--bpf-hops=false"}} {
		var out, errb bytes.Buffer
		args := append(append([]string{}, flags...), "--filter", "udp dst port 7 and host 127.0.0.99", "--duration", "200ms")
		code := run(args, &out, &errb)
		note := "skbtrace: the tc and XDP programs loaded ("
		n := strings.Count(errb.String(), note)
		switch {
		case code != 0:
			t.Errorf("%v: exit %d: %s", args, code, errb.String())
		case flags == nil && (n != 1 || !strings.Contains(errb.String(), "tc "+name) || !strings.Contains(errb.String(), "are not traced as hops: the kernel refused fentry on a BPF program (EPERM)")):
			t.Errorf("%v: stderr lacks the one note naming the program:\n%s", args, errb.String())
		case flags != nil && n != 0:
			t.Errorf("%v: stderr has the note:\n%s", args, errb.String())
		}
	}
}

// TestWhydropRefusedPrograms checks whydrop where the kernel refuses fentry
// on BPF programs (this host) and a tc program is loaded: its bpfret:tc
// probe is skipped with one line that names the program and why, and the
// tool traces on (exit 0).
func TestWhydropRefusedPrograms(t *testing.T) {
	if err := session.ProbeBPFTrace(); err == nil {
		t.Skip("fentry on BPF programs works here: the VM suite's bpf-whydrop cases cover it")
	}
	name := testProgName("wdrop")
	loadTestProg(t, bpfprogtest.TCDropPort(name, 9))
	var out, errb bytes.Buffer
	code := run([]string{"--duration", "300ms", "whydrop"}, &out, &errb)
	if n := strings.Count(errb.String(), "bpfret:tc:* is skipped: tc program "); code != 0 || n != 1 ||
		!strings.Contains(errb.String(), "the kernel refused fentry on a BPF program (EPERM)") {
		t.Errorf("exit %d, %d lines on bpfret:tc:*:\n%s", code, n, errb.String())
	}
}
