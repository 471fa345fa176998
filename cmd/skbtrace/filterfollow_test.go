package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestFilterFollowsDNAT: --filter on a datagram's original destination
// keeps its hops after nftables rewrote it (DNAT in the receiving
// namespace's prerouting), as the same skb, up to its drop at the closed
// port it was sent on to; a datagram sent straight to that port, which
// the filter does not match, is not printed. Run under `flock
// /tmp/skbtrace-e2e.lock`.
func TestFilterFollowsDNAT(t *testing.T) {
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skipf("no nft to DNAT with: %v", err)
	}
	ns1, ns2, _ := vethPair(t, 77)
	rules := "table ip skbt_dnat {\n\tchain pre {\n\t\ttype nat hook prerouting priority -100;\n" +
		"\t\tip daddr 10.200.77.100 udp dport 80 dnat to 10.200.77.2:5003;\n\t}\n}\n"
	for _, c := range [][]string{
		{"ip", "-n", ns1, "route", "add", "10.200.77.100/32", "via", "10.200.77.2"},
		{"ip", "netns", "exec", ns2, "nft", "-f", "-"},
	} {
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Stdin = strings.NewReader(rules)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", c, err, out)
		}
	}
	cmd := "ip netns exec " + ns1 + " sh -c '" + sendCommand("10.200.77.100:80", 1, 10, 0) + "; " + sendCommand("10.200.77.2:5004", 1, 10, 0) + "'"
	code, out, errs := runCLI(t, "--filter", "udp and dst host 10.200.77.100", "-c", cmd)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	hop := regexp.MustCompile(`^\S+ +\d+ (0x[0-9a-f]+) (\S+) .* pkt=IP 10\.200\.77\.1\.\d+ > (10\.200\.77\.\d+\.\d+): UDP`)
	before, after := map[string]bool{}, map[string][]string{}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, ".5004") {
			t.Errorf("the datagram the filter does not match is printed: %s", l)
		}
		m := hop.FindStringSubmatch(l)
		switch {
		case m == nil:
		case m[3] == "10.200.77.100.80":
			before[m[1]] = true
		case m[3] == "10.200.77.2.5003" && before[m[1]]:
			after[m[1]] = append(after[m[1]], m[2])
		}
	}
	if len(before) == 0 || len(after) == 0 {
		t.Fatalf("want hops of one skb to 10.200.77.100.80 and then, DNATed, to 10.200.77.2.5003:\n%s", out)
	}
	for skb, funcs := range after {
		t.Logf("skb %s after DNAT: %s", skb, strings.Join(funcs, " "))
	}
}

// TestFilterFollowsNoStranger: --filter on one TCP connection's port, then
// a busier connection on another port in the same namespace: the other
// connection's skbs take the addresses of the first one's, freed (pure
// ACKs and consumed data freed without the free tracepoints among them),
// and none of them may pass as followed. Run under `flock
// /tmp/skbtrace-e2e.lock`.
func TestFilterFollowsNoStranger(t *testing.T) {
	ns, _, _ := vethPair(t, 78)
	cmd := "ip netns exec " + ns + " sh -c '" + connectCommand("127.0.0.1:6001", 3, 100000) + " && " + connectCommand("127.0.0.1:6002", 5, 400000) + "'"
	code, out, errs := runCLI(t, "--filter", "tcp and dst port 6001", "-c", cmd)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	n, strangers := 0, 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		n++
		if strings.Contains(l, ".6002") {
			if strangers++; strangers <= 5 {
				t.Errorf("a packet of the other connection: %s", l)
			}
		}
	}
	if n < 10 {
		t.Fatalf("%d lines: the connection to 6001 is not traced:\n%s", n, out)
	}
	t.Logf("%d lines, %d of the other connection", n, strangers)
}
