package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/scripts"
)

// TestDropcountRuleLabel runs dropcount on an nftables rule's drops in a
// namespace of the test's: without --nftrace the rule label is "-" (a
// netfilter drop whose rule needs the trace), with --nftrace --netns it is
// the rule's table, chain and handle, at exit and, scraped by a real
// Prometheus from --metrics, as the rule label; a closed port's drops have
// an empty label.
func TestDropcountRuleLabel(t *testing.T) {
	const ns = "skbtdcr"
	inode := netnsWithLo(t, ns)
	nftIn(t, ns, `table inet skbt_dcr {
	chain in {
		type filter hook input priority 0; policy accept;
		udp dport 7011 counter drop comment "dropcount e2e"
	}
}`)
	out, err := exec.Command("ip", "netns", "exec", ns, "nft", "-a", "list", "chain", "inet", "skbt_dcr", "in").Output()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`comment "dropcount e2e" # handle (\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no handle in:\n%s", out)
	}
	handle := string(m[1])
	// Only the test's namespace is counted.
	tool, _ := scripts.Lookup("dropcount")
	text := strings.ReplaceAll(tool.Text, "/skb->protocol != 0 &&", fmt.Sprintf("/skb->protocol != 0 && netns == %d &&", inode))
	if text == tool.Text {
		t.Fatal("dropcount's predicate has changed: the test cannot select a namespace")
	}
	file := filepath.Join(t.TempDir(), "dropcount.st")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	line := func(reason, loc, table, chain, rule string, n int) *regexp.Regexp {
		return regexp.MustCompile(fmt.Sprintf(`(?m)^@drops\[%s, %s\+0x[0-9a-f]+, lo, %d \(netns:%s\), %s, %s, %s\]: %d$`,
			reason, loc, inode, ns, table, chain, regexp.QuoteMeta(rule), n))
	}
	// Each datagram from a socket of its own: a flow each, one line.
	send := udpTo(7011, 3) + "; " + udpTo(9, 2)

	t.Run("no-nftrace", func(t *testing.T) {
		stdout := startCLI(t, file)
		inNetns(t, ns, send)
		got := stdout()
		for _, re := range []*regexp.Regexp{
			line("NETFILTER_DROP", "nft_do_chain", "skbt_dcr", "in", "-", 3),
			line("NO_SOCKET", "__udp4_lib_rcv", "", "", "", 2),
		} {
			if !re.MatchString(got) {
				t.Errorf("no line %s in:\n%s", re, got)
			}
		}
	})

	t.Run("nftrace-metrics", func(t *testing.T) {
		if _, err := exec.LookPath("prometheus"); err != nil {
			t.Skipf("no prometheus binary (apt-get install prometheus): %v", err)
		}
		addr := freePort(t)
		stdout := startCLI(t, "--nftrace", "--netns", ns, "--metrics", addr, file)
		prom := startPrometheus(t, map[string]string{"a": addr})
		prom.waitQuery(`up`, "node=a: 1", "node")
		inNetns(t, ns, send)
		rule := "nft inet skbt_dcr in handle " + handle
		// Scraped first: the label a scrape names stays the exit's.
		prom.waitQuery(`sum by (reason, rule) (skbtrace_drops_total)`,
			"reason=NETFILTER_DROP,rule="+rule+": 3\nreason=NO_SOCKET,rule=: 2", "reason", "rule")
		got := stdout()
		for _, re := range []*regexp.Regexp{
			line("NETFILTER_DROP", "nft_do_chain", "skbt_dcr", "in", rule, 3),
			line("NO_SOCKET", "__udp4_lib_rcv", "", "", "", 2),
		} {
			if !re.MatchString(got) {
				t.Errorf("no line %s in:\n%s", re, got)
			}
		}
	})
}
