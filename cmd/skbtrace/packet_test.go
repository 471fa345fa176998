package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
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
	if strings.Contains(errs, "refuses fexit") && !regexp.MustCompile(`track\(\): GSO segments, IPv4 fragments, IPv6 fragments, reassembled datagrams, GRO merges, UDP tunnel encapsulations, IP tunnel encapsulations are not joined to their packet`).MatchString(errs) {
		t.Errorf("fexit refused, but stderr does not say what is not followed:\n%s", errs)
	}
}

// TestWritePacketComments: a script that tracks and captures writes each
// hop's logical packet in its pcapng comment (packet=0x...), so that
// Wireshark selects one packet's frames by it: 3 datagrams, 3 ids, each
// id's frames all of one skb and the datagram's hops from its send to
// its drop, and tshark's display filter on one id finds exactly those.
func TestWritePacketComments(t *testing.T) {
	ns1, _, _ := vethPair(t, 59)
	const sent = 3
	file := filepath.Join(t.TempDir(), "packets.pcapng")
	code, _, errs := runCLI(t, "-w", file, "-e", `skb:* /pcap("udp dst port 4753")/ { track(); capture() }`,
		"-c", "ip netns exec "+ns1+" "+sendCommand("10.200.59.2:4753", sent, 20, 0))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	comment := regexp.MustCompile(`^(\w+) skb=(0x[0-9a-f]+) .* packet=(0x[0-9a-f]+)(?: |$)`)
	skbs, hops := map[string]map[string]bool{}, map[string][]string{}
	for _, r := range tsharkFields(t, file, nil, "frame.comment") {
		m := comment.FindStringSubmatch(r[0])
		if m == nil {
			t.Fatalf("frame comment without a packet: %q", r[0])
		}
		if skbs[m[3]] == nil {
			skbs[m[3]] = map[string]bool{}
		}
		skbs[m[3]][m[2]] = true
		hops[m[3]] = append(hops[m[3]], m[1])
	}
	sends := 0
	for id, s := range skbs {
		if hops[id][0] != "net_dev_queue" {
			// Not a datagram's send (an skb the filter matches only as
			// it is consumed): its frames must still be one skb's.
			if len(s) != 1 {
				t.Errorf("packet %s on %d skbs: %v", id, len(s), s)
			}
			continue
		}
		sends++
		if len(s) != 1 {
			t.Errorf("packet %s on %d skbs: %v", id, len(s), s)
		}
		if h := hops[id]; h[0] != "net_dev_queue" || h[len(h)-1] != "kfree_skb" {
			t.Errorf("packet %s: hops %v, want from net_dev_queue to kfree_skb", id, h)
		}
		out, err := exec.Command("tshark", "-r", file, "-Y", `frame.comment contains "packet=`+id+`"`, "-T", "fields", "-e", "frame.number").Output()
		if n := strings.Count(string(out), "\n"); err != nil || n != len(hops[id]) {
			t.Errorf("tshark's filter on packet %s finds %d frames (%v), want %d", id, n, err, len(hops[id]))
		}
	}
	if sends != sent {
		t.Errorf("%d packets sent in the comments, want %d: %v", sends, sent, hops)
	}
}
