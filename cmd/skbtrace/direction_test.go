package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestFilterDirectionAndDevice checks the primitives a pcap file cannot
// judge, on datagrams from v1 to v2: `outbound` matches the hops that send
// them (v1's queue and transmit), `inbound` those that receive them (v2's
// receive and the drop for want of a socket); `ifname` and `on` the hops
// on that device.
func TestFilterDirectionAndDevice(t *testing.T) {
	ns1, _, _ := vethPair(t, 15)
	const sent = 2
	probes := []string{"net:net_dev_queue", "net:net_dev_start_xmit", "net:netif_receive_skb", "skb:kfree_skb"}
	var script strings.Builder
	filters := []string{"outbound", "inbound", "ifname v1", "on v2", "not outbound and not inbound"}
	for i, f := range filters {
		for _, p := range probes {
			fmt.Fprintf(&script, "tracepoint:%s /pcap(\"%s and udp dst port 4770\")/ { @f%d[\"%s\", dev] = count() }\n", p, f, i, p)
		}
	}
	code, out, errs := runCLI(t, "-e", script.String(), "-c", "ip netns exec "+ns1+" "+sendCommand("10.200.15.2:4770", sent, 10, 0))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	hop := func(i int, probe, dev string) string {
		return fmt.Sprintf("@f%d[%s, %s]: %d", i, probe, dev, sent)
	}
	want := []string{
		hop(0, "net:net_dev_queue", "v1"), hop(0, "net:net_dev_start_xmit", "v1"),
		hop(1, "net:netif_receive_skb", "v2"), hop(1, "skb:kfree_skb", "v2"),
		hop(2, "net:net_dev_queue", "v1"), hop(2, "net:net_dev_start_xmit", "v1"),
		hop(3, "net:netif_receive_skb", "v2"), hop(3, "skb:kfree_skb", "v2"),
	}
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "@") {
			got = append(got, l)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("printed:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}

	code, _, errs = runCLI(t, "--filter", "gateway router")
	if code != 1 || !strings.Contains(errs, "gateway is out of scope") {
		t.Errorf("gateway: exit %d: %s", code, errs)
	}
}
