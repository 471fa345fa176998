package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestSpecOneLiner runs SPEC.md's one-liner exactly as written, on packets
// marked 0xdeadbeef and on unmarked ones: only the marked packets print,
// one line for each tracepoint they pass, with their length and device.
func TestSpecOneLiner(t *testing.T) {
	const sent = 2
	port := closedUDPPort(t)
	dst := fmt.Sprintf("127.0.0.1:%d", port)
	helper := sendCommand(dst, sent, 7, 0xdeadbeef) + " && " + sendCommand(dst, sent, 7, 0)
	code, out, errs := runCLI(t, "-e", "skb:* /mark==0xdeadbeef/ < print(len, dev) >", "-c", helper)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "tracepoints that carry an sk_buff") {
		t.Errorf("the fallback is not announced: %q", errs)
	}
	// Each marked datagram is dropped at kfree_skb (no socket on the port):
	// 8 bytes of UDP header and 7 of payload are left then.
	var drops int
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasSuffix(line, " dev=lo") {
			t.Errorf("unexpected line %q", line)
		}
		if strings.Contains(line, " kfree_skb ") {
			drops++
			if !strings.Contains(line, " len=15 dev=lo") {
				t.Errorf("drop line %q: want len=15", line)
			}
		}
	}
	if drops != sent {
		t.Errorf("%d drops printed, want %d (only marked packets):\n%s", drops, sent, out)
	}
}
