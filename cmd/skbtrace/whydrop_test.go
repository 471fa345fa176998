package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// nftIn loads an nftables ruleset into namespace ns.
func nftIn(t *testing.T, ns, ruleset string) {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", ns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(ruleset)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft in %s: %v: %s", ns, err, out)
	}
}

// whydrop runs the whydrop tool while cmd runs, and returns its output.
func whydrop(t *testing.T, cmd string) string {
	t.Helper()
	code, out, errs := runCLI(t, "-c", cmd, "whydrop")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	return out
}

// dropBlock returns whydrop's block for the drop whose first line matches
// head, failing the test if there is none.
func dropBlock(t *testing.T, out, head string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^\S+ ` + head + `.*\n(  .*\n)*`)
	b := re.FindString(out)
	if b == "" {
		t.Fatalf("no drop matching %q in:\n%s", head, out)
	}
	return b
}

// TestWhydropNftables drops datagrams with an nftables rule in a named
// table and chain, after the rule before it marks the connection: whydrop
// and the fields name the hook, the table, the chain, the conntrack state,
// mark and tuple.
func TestWhydropNftables(t *testing.T) {
	ns1, ns2, inum := vethPair(t, 9)
	const port = 7777
	nftIn(t, ns2, fmt.Sprintf(`table inet skbt_story {
	chain skbt_input {
		type filter hook input priority 0; policy accept;
		udp dport %d ct mark set 0x2a
		udp dport %d drop
	}
}`, port, port))
	send := "ip netns exec " + ns1 + " " + sendCommand(fmt.Sprintf("10.200.9.2:%d", port), 1, 10, 0)
	b := dropBlock(t, whydrop(t, send), fmt.Sprintf(`udp +10\.200\.9\.1:\d+ > 10\.200\.9\.2:%d dev v2 netns %d`, port, inum))
	for _, want := range []string{
		"  why    NETFILTER_DROP: a netfilter rule (nftables or iptables) dropped it\n",
		"  rule   hook input, table skbt_story, chain skbt_input\n",
	} {
		if !strings.Contains(b, want) {
			t.Errorf("block lacks %q:\n%s", want, b)
		}
	}
	if !regexp.MustCompile(fmt.Sprintf(`  ct     new, mark 0x2a, 10\.200\.9\.1:\d+ > 10\.200\.9\.2:%d\n`, port)).MatchString(b) {
		t.Errorf("block lacks the conntrack entry:\n%s", b)
	}
	script := fmt.Sprintf(`tracepoint:skb:kfree_skb /dport == %d/ { print(hook, table, chain, ct_state, ct_mark) }
tracepoint:net:netif_receive_skb /dport == %d/ { print(hook, table, chain) }`, port, port)
	code, out, errs := runCLI(t, "-e", script, "-c", send)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"kfree_skb                hook=input table=skbt_story chain=skbt_input ct_state=new ct_mark=0x2a\n",
		// Outside netfilter, nothing is claimed.
		"netif_receive_skb        hook=- table= chain=\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestWhydropIptablesLegacy drops with iptables-legacy, at input in the
// receiver and at output in the sender (where the skb has no device yet):
// whydrop names the table and the built-in chain, and, without --nftrace
// (rule()'s record then keeps the address family alone), the rule that
// dropped it, IPv4's and IPv6's, by their counters.
func TestWhydropIptablesLegacy(t *testing.T) {
	if _, err := exec.LookPath("iptables-legacy"); err != nil {
		t.Fatalf("this test needs iptables-legacy (apt install iptables): %v", err)
	}
	ns1, ns2, _ := vethPair(t, 10)
	for _, c := range []string{
		"ip netns exec " + ns2 + " iptables-legacy -A INPUT -p udp --dport 7001 -j DROP",
		"ip netns exec " + ns1 + " iptables-legacy -A OUTPUT -p udp --dport 7002 -j DROP",
		"ip netns exec " + ns2 + " ip6tables-legacy -A INPUT -p udp --dport 7003 -m comment --comment \"six denies 7003\" -j DROP",
	} {
		shell(t, c)
	}
	// The dropped send fails with EPERM; the test looks at the drop.
	out := whydrop(t, fmt.Sprintf("bash -c 'ip netns exec %s %s; ip netns exec %s %s || true; ip netns exec %s %s'",
		ns1, sendCommand("10.200.10.2:7001", 1, 10, 0), ns1, sendCommand("10.200.10.2:7002", 1, 10, 0),
		ns2, sendCommand("[::1]:7003", 1, 10, 0)))
	for port, rule := range map[int]string{
		7001: "  rule   hook input, table filter, chain INPUT\n" +
			"  ipt    table filter, chain INPUT, rule 1 (iptables-legacy): -A INPUT -p udp -m udp --dport 7001 -j DROP\n",
		// At output the skb has no device yet: its namespace is not
		// known, and whydrop says so.
		7002: "  rule   hook output, table filter, chain OUTPUT\n" +
			"  which  which rule cannot be told: the packet had no device yet, so its network namespace is not known\n",
	} {
		b := dropBlock(t, out, fmt.Sprintf(`udp +10\.200\.10\.1:\d+ > 10\.200\.10\.2:%d `, port))
		if !strings.Contains(b, rule) || !strings.Contains(b, "  why    NETFILTER_DROP:") {
			t.Errorf("port %d: block lacks %q:\n%s", port, rule, b)
		}
	}
	b := dropBlock(t, out, `udp +\[::1\]:\d+ > \[::1\]:7003 `)
	if want := "  ipt    table filter, chain INPUT, rule 1 (iptables-legacy): -A INPUT -p udp -m udp --dport 7003 -m comment --comment \"six denies 7003\" -j DROP\n"; !strings.Contains(b, want) {
		t.Errorf("IPv6: block lacks %q:\n%s", want, b)
	}
}

// TestWhydropConntrackInvalid sends a TCP segment with SYN and FIN set,
// which conntrack calls invalid, to a namespace whose ruleset drops invalid
// packets: whydrop shows the invalid state and the rule's table and chain;
// a datagram to a closed port there is explained in words, with no rule.
func TestWhydropConntrackInvalid(t *testing.T) {
	ns1, ns2, _ := vethPair(t, 11)
	nftIn(t, ns2, `table ip skbt_ct {
	chain pre {
		type filter hook prerouting priority 0; policy accept;
		ct state invalid drop
	}
}`)
	out := whydrop(t, fmt.Sprintf("bash -c 'ip netns exec %s %s; ip netns exec %s %s'",
		ns1, rawCommand("10.200.11.2", "tcp,7003,1000,0,512,0x03"), ns1, sendCommand("10.200.11.2:7004", 1, 10, 0)))
	b := dropBlock(t, out, `tcp +10\.200\.11\.1:40000 > 10\.200\.11\.2:7003 `)
	for _, want := range []string{
		"  why    NETFILTER_DROP:",
		"  rule   hook prerouting, table skbt_ct, chain pre\n",
		"  ct     invalid\n",
	} {
		if !strings.Contains(b, want) {
			t.Errorf("block lacks %q:\n%s", want, b)
		}
	}
	b = dropBlock(t, out, `udp +10\.200\.11\.1:\d+ > 10\.200\.11\.2:7004 `)
	if !strings.Contains(b, "  why    NO_SOCKET: no socket is bound to the destination address and port\n") || strings.Contains(b, "rule") {
		t.Errorf("the closed port's drop is not explained as NO_SOCKET without a rule:\n%s", b)
	}
}
