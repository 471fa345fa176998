package rules

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestNftraceTable: --nftrace's table goes into the namespace with a
// ruleset, not into one without, catches the drop verdict of a rule in a
// chain a base chain jumps to, and is gone after Close.
func TestNftraceTable(t *testing.T) {
	a, b := netnsPair(t, 1)
	nftIn(t, b, `table inet rt_one {
	chain in {
		type filter hook input priority 0; policy accept;
		udp dport 7001 jump deny
	}
	chain deny {
		udp dport 7001 counter drop comment "rt deny"
	}
}`)
	// Only the test's namespaces: never the host's ruleset.
	only, err := netnsInodes([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := startNftrace(func(s string) { t.Log(s) }, only)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	mine := TablePrefix + fmt.Sprint(os.Getpid())
	if out := sh(t, "ip netns exec "+b+" nft list tables"); !strings.Contains(out, "table inet "+mine) {
		t.Fatalf("no table %s in %s: %s", mine, b, out)
	}
	if out := sh(t, "ip netns exec "+a+" nft list tables"); strings.Contains(out, mine) {
		t.Fatalf("table %s in %s, which has no ruleset: %s", mine, a, out)
	}
	sh(t, fmt.Sprintf("ip netns exec %s bash -c 'printf x > /dev/udp/10.202.1.2/7001'", a))
	var got traceDrop
	deadline := time.Now().Add(3 * time.Second)
	for got.table == "" && time.Now().Before(deadline) {
		tr.mu.Lock()
		for _, n := range tr.nets {
			n.drain()
			for _, d := range n.drops {
				got = d
			}
		}
		tr.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	handle := handleOf(t, b, "rt_one", "deny", "rt deny")
	if got.table != "rt_one" || got.chain != "deny" || got.handle != handle || got.policy {
		t.Fatalf("traced drop %+v, want table rt_one chain deny handle %d", got, handle)
	}
	want := Drop{Netns: tr.netnsOf(b), L4: 17, Saddr: netip.MustParseAddr("10.202.1.1"), Daddr: netip.MustParseAddr("10.202.1.2"), Dport: 7001}
	if len(got.th) >= 4 {
		want.Sport = binary.BigEndian.Uint16(got.th)
	}
	if !got.matches(want) {
		t.Errorf("the trace %+v does not match its packet %+v", got, want)
	}
	if want.Dport = 7002; got.matches(want) {
		t.Errorf("the trace matches a packet to another port")
	}
	tr.Close()
	if out := sh(t, "ip netns exec "+b+" nft list tables"); strings.Contains(out, mine) {
		t.Fatalf("table %s left after Close: %s", mine, out)
	}
}

// handleOf is the handle nft prints for the rule with this comment.
func handleOf(t *testing.T, ns, table, chain, comment string) uint64 {
	t.Helper()
	out := sh(t, fmt.Sprintf("ip netns exec %s nft -a list chain inet %s %s", ns, table, chain))
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, `comment "`+comment+`"`) {
			var h uint64
			if i := strings.LastIndex(l, "# handle "); i >= 0 {
				fmt.Sscan(l[i+len("# handle "):], &h)
				return h
			}
		}
	}
	t.Fatalf("no rule with comment %q in:\n%s", comment, out)
	return 0
}

// netnsOf is the inode of an ip netns.
func (t *Nftrace) netnsOf(name string) uint64 {
	var st unix.Stat_t
	if unix.Stat("/run/netns/"+name, &st) != nil {
		return 0
	}
	return st.Ino
}
