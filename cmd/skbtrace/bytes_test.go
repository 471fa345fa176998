package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMacaddrAndStrncmp sends a datagram from v1 (MAC 02:00:00:00:aa:01)
// to v2 (02:00:00:00:bb:02) and checks, at v1's transmit, macaddr() of the
// device's address, of the frame's source and destination (through an
// integer address), as a map key and in JSON, and strncmp() of the sender's
// comm: 0 for its first bytes, 1 for other bytes.
func TestMacaddrAndStrncmp(t *testing.T) {
	ns1, ns2, _ := vethPair(t, 19)
	shell(t, fmt.Sprintf("ip -n %s link set v1 address 02:00:00:00:aa:01", ns1))
	shell(t, fmt.Sprintf("ip -n %s link set v2 address 02:00:00:00:bb:02", ns2))
	const port = 5557
	send := "ip netns exec " + ns1 + " " + sendCommand(fmt.Sprintf("10.200.19.2:%d", port), 2, 5, 0)
	// The sender is this test binary run again: its comm's first bytes.
	comm := filepath.Base(os.Args[0])[:3]
	script := fmt.Sprintf(`tracepoint:net:net_dev_queue /dev == "v1" && dport == %d/ {
	printf("%%s %%s %%s %%d %%d\n", macaddr(skb->dev->dev_addr), macaddr((uint64)skb->head + skb->mac_header + 6),
		macaddr((uint64)skb->head + skb->mac_header), strncmp(comm, "%s", 3), strncmp(comm, "%sX", 4));
	@[macaddr(skb->dev->dev_addr)] = count()
}`, port, comm, comm)
	code, out, errs := runCLI(t, "-e", script, "-c", send)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "02:00:00:00:aa:01 02:00:00:00:aa:01 02:00:00:00:bb:02 0 1\n"
	if strings.Count(out, want) != 2 || !strings.Contains(out, "@[02:00:00:00:aa:01]: 2\n") {
		t.Errorf("output:\n%s\nwant twice %q and the map keyed by the MAC", out, want)
	}
	code, out, errs = runCLI(t, "-f", "json", "-e", fmt.Sprintf(`tracepoint:net:net_dev_queue /dev == "v1" && dport == %d/ { print(macaddr(skb->dev->dev_addr)); exit() }`, port), "-c", send)
	if code != 0 || !strings.Contains(out, `"macaddr(skb-\u003edev-\u003edev_addr)":"02:00:00:00:aa:01"`) {
		t.Errorf("exit %d, json output:\n%s%s", code, out, errs)
	}
}
