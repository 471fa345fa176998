package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/internal/testkit"
)

// TestTimelinePackets sends 5 datagrams over veth to a closed port with
// --timeline -f json: each is one logical packet, a block of its own
// whose id no other block has, the CPU that tracked it (plus one) in the
// id's top 16 bits, every hop on the block's one skb (nothing splits a
// small datagram). Where this kernel refuses fexit, stderr says once
// which splits are not followed.
func TestTimelinePackets(t *testing.T) {
	ns1, _, _ := vethPair(t, 58)
	const port, n = 7791, 5
	code, out, errs := runCLI(t, "--timeline", "-f", "json", "--filter", fmt.Sprintf("udp port %d", port),
		"-c", "ip netns exec "+ns1+" "+sendCommand(fmt.Sprintf("10.200.58.2:%d", port), n, 10, 0))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	ids := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var b testkit.TimelineBlock
		if err := json.Unmarshal([]byte(l), &b); err != nil {
			t.Fatalf("not a JSON object: %q: %v", l, err)
		}
		if b.Type != "timeline" || len(b.Hops) == 0 || b.Hops[0].Func != "net_dev_queue" {
			continue
		}
		if ids[b.Packet] {
			t.Errorf("packet %s has two blocks:\n%s", b.Packet, out)
		}
		ids[b.Packet] = true
		id, err := strconv.ParseUint(strings.TrimPrefix(b.Packet, "0x"), 16, 64)
		if err != nil || id == 0 {
			t.Fatalf("packet %q: %v", b.Packet, err)
		}
		if cpu := id >> 48; cpu < 1 || cpu > uint64(runtime.NumCPU()) {
			t.Errorf("packet %s: CPU %d - 1 is not one of this machine's %d", b.Packet, cpu, runtime.NumCPU())
		}
		for _, h := range b.Hops {
			if h.Skb != b.Skb || h.Edge != nil {
				t.Errorf("packet %s (skb %s): hop %+v on another skb", b.Packet, b.Skb, h)
			}
		}
		if last := b.Hops[len(b.Hops)-1]; last.Func != "kfree_skb" {
			t.Errorf("packet %s does not end at its drop: %+v", b.Packet, last)
		}
	}
	if len(ids) != n {
		t.Errorf("%d packets; want %d:\n%s", len(ids), n, out)
	}
	if strings.Contains(errs, "refuses fexit") && !regexp.MustCompile(`track\(\): GSO segments, IPv4 fragments, IPv6 fragments, reassembled datagrams are not joined to their packet`).MatchString(errs) {
		t.Errorf("fexit refused, but stderr does not say what is not followed:\n%s", errs)
	}
}
