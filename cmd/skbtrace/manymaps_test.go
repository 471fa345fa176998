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

// TestManyKeylessMapsInOneProbe loads 200 keyless counts and four other
// aggregations in one probe, which share two kernel maps (the kernel lets
// a program use 64): each prints its own value at exit, and clear(),
// zero() and print() in END act on one of them alone.
func TestManyKeylessMapsInOneProbe(t *testing.T) {
	port := closedUDPPort(t)
	const sent = 3
	var b strings.Builder
	fmt.Fprintf(&b, "tracepoint:skb:kfree_skb /dport == %d/ { ", port)
	for i := range 200 {
		fmt.Fprintf(&b, "@m%d = count(); ", i)
	}
	b.WriteString("@s = sum(len); @mx = max(len); @mn = min(len); @av = avg(len) }\n")
	b.WriteString(`END { clear(@m1); zero(@m2); print(@m4); printf("--\n") }`)
	code, out, errs := runCLI(t, "-e", b.String(), "-c", sendCommand(fmt.Sprintf("127.0.0.1:%d", port), sent, 5, 0))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	before, after, ok := strings.Cut(out, "--\n")
	if !ok || strings.TrimSpace(before) != fmt.Sprintf("@m4: %d", sent) {
		t.Fatalf("END's print(@m4) printed %q; output:\n%s", before, out)
	}
	for i := range 200 {
		want := fmt.Sprintf("@m%d: %d\n", i, sent)
		switch i {
		case 1:
			if strings.Contains(after, "@m1:") {
				t.Errorf("@m1 printed after clear(@m1):\n%s", after)
			}
			continue
		case 2:
			want = "@m2: 0\n"
		}
		if !strings.Contains(after, want) {
			t.Fatalf("no %q in the output:\n%s", want, after)
		}
	}
	for _, want := range []string{"@s: 39\n", "@mx: 13\n", "@mn: 13\n", "@av: 13\n"} {
		if !strings.Contains(after, want) {
			t.Errorf("no %q in the output:\n%s", want, after)
		}
	}
}

// TestTooManyMapsInOneProbe: keyed maps cannot share a kernel map; past the
// kernel's 64 maps a program, the error says so.
func TestTooManyMapsInOneProbe(t *testing.T) {
	var b strings.Builder
	b.WriteString("tracepoint:skb:kfree_skb { ")
	for i := range 70 {
		fmt.Fprintf(&b, "@m%d[len] = count(); ", i)
	}
	b.WriteString("}")
	code, _, errs := runCLI(t, "-e", b.String(), "-c", "true")
	if code != 1 || !strings.Contains(errs, "the probe uses 70 maps, and the kernel lets one program use at most 64; split it into smaller probes") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}
