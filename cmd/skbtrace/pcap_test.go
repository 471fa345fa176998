package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/internal/pcaptest"
	"github.com/skbtrace/skbtrace/runtime/pipeline"
)

// TestFilterEquivalence checks skbtrace's compiled tcpdump filters against
// tcpdump itself: the varied frames of pcaptest are sent out of a veth
// with an AF_PACKET socket, each with its own mark, and for every filter
// of the corpus the frames pcap("...") matched at net_dev_queue must be
// the frames `tcpdump -r` selects from a pcap file of the same frames
// (pcaptest.Selects: vxlan, which bookworm's tcpdump lacks, by its Geneve
// twin).
func TestFilterEquivalence(t *testing.T) {
	dir := t.TempDir()
	ns1, _, _ := vethPair(t, 5)
	const base = 0x5c0e0000
	var script strings.Builder
	for i, f := range pcaptest.Corpus {
		fmt.Fprintf(&script, "tracepoint:net:net_dev_queue /(mark >> 16) == 0x5c0e && pcap(%s)/ { printf(\"%d %%d\\n\", mark & 0xffff) }\n", pipeline.Quote(f), i)
	}
	code, out, errs := runCLI(t, "-e", script.String(), "-c", injectCommand(ns1, "v1", base))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	t.Logf("%d matches", strings.Count(out, "\n"))
	got := make([][]int, len(pcaptest.Corpus))
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("unexpected line %q", line)
		}
		i, _ := strconv.Atoi(f[0])
		frame, _ := strconv.Atoi(f[1])
		got[i] = append(got[i], frame)
	}
	for i, f := range pcaptest.Corpus {
		want, err := pcaptest.Selects(dir, f)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got[i])
		if !slices.Equal(got[i], want) && !(len(got[i]) == 0 && len(want) == 0) {
			t.Errorf("%q: skbtrace matched frames %v, tcpdump %v", f, got[i], want)
		}
	}
}

// TestFilterFlag checks --filter beside a script, ANDed with its skb
// probes' predicates, and alone, printing every hop of the packets it
// selects. Datagrams to port 4747 are dropped by nftables in the sender's
// namespace before they have a link header (the filter reads the one
// skbtrace synthesizes); those to 4748 and 4749 are dropped by the
// receiver, which has no socket there; the filter excludes 4749.
func TestFilterFlag(t *testing.T) {
	ns1, _, _ := vethPair(t, 6)
	for _, rule := range []string{
		"add table inet skbtrace_pcap",
		"add chain inet skbtrace_pcap out { type filter hook output priority 0 ; policy accept ; }",
		"add rule inet skbtrace_pcap out udp dport 4747 drop",
	} {
		if out, err := exec.Command("ip", append([]string{"netns", "exec", ns1, "nft"}, strings.Fields(rule)...)...).CombinedOutput(); err != nil {
			t.Fatalf("nft %s: %v: %s", rule, err, out)
		}
	}
	const mark = 0x5c0f0001
	// The sender stops at the first datagram nftables refuses: send it
	// three times.
	send := fmt.Sprintf("for i in 1 2 3; do ip netns exec %s %s; done; ", ns1, sendCommand("10.200.6.2:4747", 1, 10, mark)) +
		fmt.Sprintf("ip netns exec %s %s; ip netns exec %s %s; true", ns1, sendCommand("10.200.6.2:4748", 3, 10, mark), ns1, sendCommand("10.200.6.2:4749", 3, 10, mark))
	code, out, errs := runCLI(t, "--filter", "dst host 10.200.6.2 and udp and (dst port 4747 or dst port 4748)",
		"-e", "tracepoint:skb:kfree_skb /len < 100/ { @[reason, dport] = count() }", "-c", "sh -c '"+send+"'")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if want := "@[NETFILTER_DROP, 4747]: 3\n@[NO_SOCKET, 4748]: 3\n"; out != want {
		t.Errorf("--filter with a script printed:\n%s\nwant:\n%s", out, want)
	}

	code, out, errs = runCLI(t, "--filter", "udp dst port 4748", "-c", "ip netns exec "+ns1+" "+sendCommand("10.200.6.2:4748", 2, 10, mark))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	hops := map[string]int{}
	line := regexp.MustCompile(`^\S+ +\d+ 0x[0-9a-f]+ (\w+) +dev=v[12] netns=\d+(?: \(netns:skbt6[ab]\))? mark=0x[0-9a-f]+ pkt=IP 10\.200\.6\.1\.\d+ > 10\.200\.6\.2\.4748: UDP, length 10$`)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("--filter printed %q", l)
			continue
		}
		hops[m[1]]++
	}
	// Every hop of both datagrams: out of v1, into v2, dropped.
	for _, h := range []string{"net_dev_queue", "net_dev_start_xmit", "netif_receive_skb", "kfree_skb"} {
		if hops[h] != 2 {
			t.Errorf("--filter printed %d %s lines, want 2:\n%s", hops[h], h, out)
		}
	}
}

// TestFilterErrors checks that a bad --filter is reported with a caret
// under the mistake, exit status 1.
func TestFilterErrors(t *testing.T) {
	code, _, errs := runCLI(t, "--filter", "tcp and port 8o")
	want := "--filter:1:14: unknown port \"8o\"\n    tcp and port 8o\n                 ^~\n    hint: give the port's number\n"
	if code != 1 || errs != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", code, errs, want)
	}
}
