package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTimelineVeth sends one datagram from one namespace to a closed port
// in another, over veth, with --timeline: one block for the packet, its
// hops in the order the packet took them (sent on v1 in the first
// namespace, received on v2 in the second), the times since the first hop
// never decreasing, and the drop with its reason and location last.
func TestTimelineVeth(t *testing.T) {
	ns1, _, inum := vethPair(t, 12)
	const port = 7778
	code, out, errs := runCLI(t, "--timeline", "--filter", fmt.Sprintf("udp port %d", port),
		"-c", "ip netns exec "+ns1+" "+sendCommand(fmt.Sprintf("10.200.12.2:%d", port), 1, 10, 0))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var block string
	for _, b := range strings.Split(strings.TrimSpace(out), "\n\n") {
		if strings.Contains(b, "net_dev_queue") {
			if block != "" {
				t.Fatalf("two blocks for one datagram:\n%s", out)
			}
			block = b
		}
	}
	if block == "" {
		t.Fatalf("no block with the datagram's hops:\n%s", out)
	}
	lines := strings.Split(block, "\n")
	if !regexp.MustCompile(`^skb 0x[0-9a-f]+ at \d\d:\d\d:\d\d\.\d{6}$`).MatchString(lines[0]) {
		t.Errorf("block header %q", lines[0])
	}
	hop := regexp.MustCompile(`^  \+ *(\d+\.\d{3})us  (\S+) +(.*)$`)
	var funcs []string
	last := -1.0
	for _, l := range lines[1:] {
		m := hop.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not a hop: %q in\n%s", l, block)
		}
		d, _ := strconv.ParseFloat(m[1], 64)
		if d < last {
			t.Errorf("time goes back at %q", l)
		}
		last = d
		funcs = append(funcs, m[2])
		switch {
		case m[2] == "net_dev_queue" || m[2] == "net_dev_start_xmit":
			if !strings.HasPrefix(m[3], "dev=v1 ") {
				t.Errorf("sent elsewhere than v1: %q", l)
			}
		case strings.HasPrefix(m[3], "dev="):
			if !strings.HasPrefix(m[3], fmt.Sprintf("dev=v2 netns=%d ", inum)) {
				t.Errorf("not on v2 in the receiving namespace (%d): %q", inum, l)
			}
		}
	}
	if lines[1][:14] != "  +     0.000u" {
		t.Errorf("the first hop is not at +0: %q", lines[1])
	}
	// The order of the path, as this kernel's tracepoints see it.
	want := []string{"net_dev_queue", "net_dev_start_xmit", "netif_rx", "netif_receive_skb", "kfree_skb"}
	i := 0
	for _, f := range funcs {
		if i < len(want) && f == want[i] {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("hops %v do not pass %v in order", funcs, want)
	}
	if end := lines[len(lines)-1]; !regexp.MustCompile(`kfree_skb +reason=NO_SOCKET ksym\(location\)=__udp4_lib_rcv\+0x[0-9a-f]+$`).MatchString(end) {
		t.Errorf("the block does not end at the drop: %q", end)
	}
}
