package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestManyMapsInOneProbe loads a probe of 60 map updates, more than the
// 512-byte stack holds if every statement kept its own slots, with a
// variable assigned before them and read after: every map counts every
// packet, and the variable keeps its value across the statements. Past
// the kernel's 64 maps a program, the error says so.
func TestManyMapsInOneProbe(t *testing.T) {
	port := closedUDPPort(t)
	const sent = 3
	var b strings.Builder
	fmt.Fprintf(&b, "tracepoint:skb:kfree_skb /dport == %d/ { $l = len; ", port)
	for i := range 60 {
		fmt.Fprintf(&b, "@m%d[dport] = count(); ", i)
	}
	b.WriteString("@len[$l] = count() }")
	code, out, errs := runCLI(t, "-e", b.String(), "-c", sendCommand(fmt.Sprintf("127.0.0.1:%d", port), sent, 5, 0))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for i := range 60 {
		if want := fmt.Sprintf("@m%d[%d]: %d\n", i, port, sent); !strings.Contains(out, want) {
			t.Fatalf("no %q in the output:\n%s", want, out)
		}
	}
	if want := fmt.Sprintf("@len[%d]: %d\n", 8+5, sent); !strings.Contains(out, want) {
		t.Errorf("no %q in the output:\n%s", want, out)
	}
}

func TestTooManyMapsInOneProbe(t *testing.T) {
	var b strings.Builder
	b.WriteString("tracepoint:skb:kfree_skb { ")
	for i := range 200 {
		fmt.Fprintf(&b, "@m%d = count(); ", i)
	}
	b.WriteString("}")
	code, _, errs := runCLI(t, "-e", b.String(), "-c", "true")
	if code != 1 || !strings.Contains(errs, "the probe uses 200 maps, and the kernel lets one program use at most 64; split it into smaller probes") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}
