package codegen_test

import (
	"testing"

	"github.com/skbtrace/skbtrace/codegen"
)

// TestTunnelFiltersLoad puts filters with vxlan and geneve through the
// verifier: the inner packet's offsets are values the program computed
// (Geneve's from its option length), kept in stack slots, read by every
// primitive after the tunnel; in a predicate and in a statement, two
// filters in one program, beside pkt and capture(), nested tunnels, VLAN
// tags in either layer.
func TestTunnelFiltersLoad(t *testing.T) {
	for _, script := range []string{
		`tracepoint:net:netif_receive_skb /pcap("vxlan")/ { @[len] = count() }`,
		`tracepoint:net:netif_receive_skb /pcap("vxlan 42 and udp port 9")/ { print(pkt) }`,
		`tracepoint:net:net_dev_queue /pcap("geneve 43 and (tcp[tcpflags] & tcp-syn != 0 or icmp6)")/ { capture() }`,
		`tracepoint:net:netif_receive_skb /pcap("vlan and geneve and vlan 30 and ether host 02:00:00:00:42:01 and udp port 9")/ { print(pkt) }`,
		`tracepoint:net:netif_receive_skb /pcap("geneve and geneve 45 and ip6 and udp dst port 53")/ { print(pkt) }`,
		`tracepoint:net:netif_receive_skb { if (pcap("vxlan and tcp port 80")) { @a = count() } if (pcap("udp port 9 or geneve and ip[9] = 1")) { @b = count() } }`,
		`tracepoint:net:netif_receive_skb /pcap("vxlan and arp") || pcap("geneve and not udp")/ { print(pkt, len) }`,
	} {
		t.Run(script, func(t *testing.T) {
			load(t, compileWith(t, script, codegen.Options{}))
		})
	}
}
