package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/internal/testkit"
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
	if !regexp.MustCompile(`^skb 0x[0-9a-f]+ at \d\d:\d\d:\d\d\.\d{6} packet 0x[0-9a-f]+(?: \(netns:skbt\w+( > netns:skbt\w+)*\))?$`).MatchString(lines[0]) {
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
	checkHopOrder(t, funcs)
	if end := lines[len(lines)-1]; !regexp.MustCompile(`kfree_skb +reason=NO_SOCKET ksym\(location\)=__udp4_lib_rcv\+0x[0-9a-f]+$`).MatchString(end) {
		t.Errorf("the block does not end at the drop: %q", end)
	}
}

// TestTimelineVethJSON is TestTimelineVeth with -f json: every line one
// JSON object, the datagram's block one of them with type timeline, its
// hops in the path's order with their device and namespace, the times
// since the first never decreasing, and the drop's reason and location.
func TestTimelineVethJSON(t *testing.T) {
	ns1, _, inum := vethPair(t, 16)
	const port = 7779
	code, out, errs := runCLI(t, "--timeline", "-f", "json", "--filter", fmt.Sprintf("udp port %d", port),
		"-c", "ip netns exec "+ns1+" "+sendCommand(fmt.Sprintf("10.200.16.2:%d", port), 1, 10, 0))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var found *testkit.TimelineBlock
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var b testkit.TimelineBlock
		if err := json.Unmarshal([]byte(l), &b); err != nil {
			t.Fatalf("not a JSON object: %q: %v", l, err)
		}
		if b.Type != "timeline" {
			continue
		}
		if len(b.Hops) > 0 && b.Hops[0].Func == "net_dev_queue" {
			if found != nil {
				t.Fatalf("two blocks for one datagram:\n%s", out)
			}
			found = &b
		}
	}
	if found == nil {
		t.Fatalf("no block with the datagram's hops:\n%s", out)
	}
	if !regexp.MustCompile(`^0x[0-9a-f]+$`).MatchString(found.Skb) {
		t.Errorf("skb %q", found.Skb)
	}
	if !regexp.MustCompile(`^0x[0-9a-f]+$`).MatchString(found.Packet) {
		t.Errorf("packet %q", found.Packet)
	}
	start, err := time.Parse(time.RFC3339Nano, found.Time)
	if err != nil {
		t.Errorf("block time: %v", err)
	}
	var funcs []string
	last := uint64(0)
	for i, h := range found.Hops {
		funcs = append(funcs, h.Func)
		if h.CPU == nil || h.DeltaNs == nil {
			t.Fatalf("hop %d lacks cpu or delta_ns: %+v", i, h)
		}
		if i == 0 && *h.DeltaNs != 0 {
			t.Errorf("the first hop is at +%d ns", *h.DeltaNs)
		}
		if *h.DeltaNs < last {
			t.Errorf("time goes back at hop %d: %+v", i, h)
		}
		last = *h.DeltaNs
		if at, err := time.Parse(time.RFC3339Nano, h.Time); err != nil || at.Sub(start) != time.Duration(*h.DeltaNs) {
			t.Errorf("hop %d at %s (%v): not %d ns after %s", i, h.Time, err, *h.DeltaNs, found.Time)
		}
		dev, hasDev := h.Data["dev"]
		switch {
		case h.Func == "net_dev_queue" || h.Func == "net_dev_start_xmit":
			if dev != "v1" {
				t.Errorf("sent elsewhere than v1: %+v", h)
			}
		case hasDev:
			if dev != "v2" || h.Data["netns"] != float64(inum) {
				t.Errorf("not on v2 in the receiving namespace (%d): %+v", inum, h)
			}
		}
	}
	checkHopOrder(t, funcs)
	end := found.Hops[len(found.Hops)-1]
	if end.Func != "kfree_skb" || end.Data["reason"] != "NO_SOCKET" {
		t.Errorf("the block does not end at the drop: %+v", end)
	}
	if d := found.Drop; d["func"] != "kfree_skb" || d["reason"] != "NO_SOCKET" || !regexp.MustCompile(`^__udp4_lib_rcv\+0x[0-9a-f]+$`).MatchString(d["location"]) {
		t.Errorf("drop %v", d)
	}
}

// checkHopOrder checks that a datagram's hops pass, in order, the
// tracepoints this kernel has on its way over veth to its drop.
func checkHopOrder(t *testing.T, funcs []string) {
	t.Helper()
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
}
