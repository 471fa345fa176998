package rules

import (
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"time"
)

// Options say what a Namer may use.
type Options struct {
	// Nftrace turns on the kernel's nftables trace (skbtrace --nftrace):
	// a table of skbtrace's own in each network namespace with an nftables
	// ruleset, removed on exit (Nftrace says how). Without it nftables
	// rules are not named, and the first such drop says what it takes.
	Nftrace bool
	// Netns limits Nftrace's tables to these network namespaces (an ip
	// netns name, a path such as /proc/PID/ns/net, or an inode number);
	// none: every namespace with a ruleset.
	Netns []string
	// Warn says what cannot be done, once each; nil: stderr.
	Warn func(string)
}

// Drop is what the kernel said of a dropped packet at kfree_skb.
type Drop struct {
	Reason       string // the drop reason's name: NETFILTER_DROP, TC_INGRESS, TC_EGRESS
	Netns        uint64 // the packet's network namespace (inode)
	Dev          string // the device the packet was on
	L4           uint8  // its transport protocol
	Saddr, Daddr netip.Addr
	Sport, Dport uint16
}

// Verdict names what dropped a packet. Kind is "" where nothing is named;
// Note then says why.
type Verdict struct {
	Kind   string // nftables, iptables-legacy, tc
	Family string // nftables: the table's family (inet, ip, ip6, ...)
	Table  string
	Chain  string
	Handle uint64 // nftables: the rule's handle (0 for a chain's policy)
	Number int    // iptables: the rule's number in its chain (0 for the policy)
	Policy bool   // the chain's policy dropped it, no rule
	Text   string // the rule as nft -a list ruleset or iptables-legacy -S prints it; tc's filter and action
	// IptText is an iptables-nft rule as iptables-nft -S prints it (its
	// comment too, which nft does not print), Number its number.
	IptText string
	Comment string
	Object  *Object
	Dev     string // tc: the device, its hook (ingress, egress) and the qdisc that holds it
	Hook    string
	Qdisc   string
	Note    string // what could not be told, and why
}

// Namer names the rule or action that dropped a packet, in user space:
// nftables' (and iptables-nft's) from the kernel's traces with --nftrace,
// iptables-legacy's and tc's from the kernel's counters. The formats
// (whydrop's rule lines, JSON) and metrics ask it; it imports nothing of
// skbtrace.
type Namer struct {
	nft    *Nftrace
	legacy legacy
	tc     tcActs

	mu       sync.Mutex
	paths    map[uint64]string
	scanned  time.Time
	warned   map[string]bool
	warnFunc func(string)
}

// New starts a Namer: with Options.Nftrace, the trace tables; in every
// network namespace, the first read of iptables-legacy's and tc's
// counters, which the drops that follow are told by.
func New(o Options) (*Namer, error) {
	n := &Namer{warned: map[string]bool{}, warnFunc: o.Warn}
	if n.warnFunc == nil {
		n.warnFunc = func(s string) { fmt.Fprintln(os.Stderr, "skbtrace: "+s) }
	}
	if o.Nftrace {
		only, err := netnsInodes(o.Netns)
		if err != nil {
			return nil, err
		}
		t, err := startNftrace(n.warn, only)
		if err != nil {
			return nil, err
		}
		n.nft = t
	}
	n.paths, n.scanned = netnsPaths(), time.Now()
	for ino, path := range n.paths {
		n.startNet(ino, path)
	}
	return n, nil
}

// startNet reads a namespace's counters for the first time.
func (n *Namer) startNet(ino uint64, path string) {
	for _, v6 := range []bool{false, true} {
		if err := n.legacy.start(ino, path, v6); err != nil {
			n.warn("iptables-legacy's counters: " + err.Error() + ": its drops are not named")
		}
	}
	n.tc.start(strconv.FormatUint(ino, 10), path)
}

// Close removes --nftrace's tables.
func (n *Namer) Close() error {
	if n == nil {
		return nil
	}
	return n.nft.Close()
}

// Nftrace is the trace, nil without Options.Nftrace.
func (n *Namer) Nftrace() *Nftrace { return n.nft }

// warn says s once.
func (n *Namer) warn(s string) {
	n.mu.Lock()
	seen := n.warned[s]
	n.warned[s] = true
	n.mu.Unlock()
	if !seen {
		n.warnFunc(s)
	}
}

// path is a file of the namespace with this inode; a namespace not seen
// yet starts a scan (once a second at most), and its counters are read
// from then on.
func (n *Namer) path(ino uint64) (string, bool) {
	n.mu.Lock()
	p, ok := n.paths[ino]
	if ok || time.Since(n.scanned) < time.Second {
		n.mu.Unlock()
		return p, ok
	}
	old := n.paths
	n.paths, n.scanned = netnsPaths(), time.Now()
	fresh := map[uint64]string{}
	for i, q := range n.paths {
		if _, seen := old[i]; !seen {
			fresh[i] = q
		}
	}
	p, ok = n.paths[ino]
	n.mu.Unlock()
	for i, q := range fresh {
		n.startNet(i, q)
	}
	return p, ok
}

// Name names what dropped the packet: for NETFILTER_DROP the nftables,
// iptables-nft or iptables-legacy rule, for TC_INGRESS and TC_EGRESS the
// tc action; other reasons name nothing here (a BPF program's verdict is
// the tools' own).
func (n *Namer) Name(d Drop) Verdict { return n.name(d, true) }

// Rule names the rule or action as Name does, without an nftables rule's
// text, comment, iptables-nft form and object (no nft or iptables-nft
// run): what a map key's rule label needs (table, chain, handle or
// number), cheap enough for each new element of a scrape. A tc drop on a
// hook with several actions names the hook alone (no Text): the element
// counts the hook's later drops too, whichever action drops them.
func (n *Namer) Rule(d Drop) Verdict { return n.name(d, false) }

func (n *Namer) name(d Drop, full bool) Verdict {
	switch d.Reason {
	case "NETFILTER_DROP":
		return n.netfilter(d, full)
	case "TC_INGRESS", "TC_EGRESS":
		return n.tcAction(d, full)
	}
	return Verdict{}
}

func (n *Namer) netfilter(d Drop, full bool) Verdict {
	if n.nft != nil {
		if t, tn, ok := n.nft.take(d); ok {
			return n.nftVerdict(t, tn.path, full)
		}
	}
	if d.Netns == 0 {
		// No device yet (output), no namespace: its counters cannot be
		// read, nor the nftables trace matched.
		return Verdict{Note: "which rule cannot be told: the packet had no device yet, so its network namespace is not known"}
	}
	path, ok := n.path(d.Netns)
	if ok && d.Saddr.IsValid() {
		r, count, has, err := n.legacy.name(d.Netns, path, !d.Saddr.Unmap().Is4())
		switch {
		case err != nil:
			n.warn("iptables-legacy's counters: " + err.Error())
		case has && count == 1:
			v := Verdict{Kind: "iptables-legacy", Table: r.table, Chain: r.chain, Number: r.number, Policy: r.number == 0, Text: r.text, Comment: legacyComment(r.text)}
			v.Object = objectOf(r.table, r.chain, v.Comment)
			return v
		case has && count > 1:
			return Verdict{Note: fmt.Sprintf("iptables-legacy: %d rules' drop counters rose since the last drop, which of them dropped this one cannot be told", count)}
		}
	}
	switch {
	case n.nft == nil:
		n.warn("which nftables rule dropped a packet needs --nftrace: it adds a table of skbtrace's own (inet " + TablePrefix + "PID) to each network namespace with a ruleset, setting nftrace on its packets, removed on exit")
		return Verdict{Note: "which nftables rule: run with --nftrace"}
	case !n.nft.traced(d.Netns):
		return Verdict{Note: "netns not traced: it had no nftables ruleset when skbtrace looked; its drops from now on are"}
	}
	if lost := n.nft.lostTraces(); lost > 0 {
		return Verdict{Note: fmt.Sprintf("no nftables trace of this packet (%d trace messages lost: the socket had no room)", lost)}
	}
	return Verdict{Note: "no nftables trace of this packet, nor an iptables-legacy counter"}
}

// nftVerdict is a traced drop's verdict; with full, the rule's text,
// comment and iptables-nft form (nft and iptables-nft runs) and object.
func (n *Namer) nftVerdict(t traceDrop, path string, full bool) Verdict {
	fam := nftFamilies[t.family]
	if fam == "" {
		fam = strconv.Itoa(int(t.family))
	}
	v := Verdict{Kind: "nftables", Family: fam, Table: t.table, Chain: t.chain, Handle: t.handle, Policy: t.policy}
	if !full {
		return v
	}
	if !t.policy {
		text, err := nftRuleText(path, fam, t.table, t.chain, t.handle)
		switch {
		case err != nil:
			n.warn("the rule's text: " + err.Error())
		case text == "":
			v.Note = "the rule is gone from the ruleset"
		}
		v.Text, v.Comment = text, nftComment(text)
		if ipt, num, ok := iptablesNftRule(path, fam, t.table, t.chain, t.handle); ok {
			v.IptText, v.Number = ipt, num
			if v.Comment == "" {
				v.Comment = legacyComment(ipt)
			}
		}
	}
	v.Object = objectOf(t.table, t.chain, v.Comment)
	return v
}

// tcAction names a tc drop's action; without full (a map key's label,
// asked once for all the drops an element counts), the hook alone where it
// has more than one action: which of them dropped the drops to come
// cannot be known.
func (n *Namer) tcAction(d Drop, full bool) Verdict {
	hook := "ingress"
	if d.Reason == "TC_EGRESS" {
		hook = "egress"
	}
	path, ok := n.path(d.Netns)
	if !ok || d.Dev == "" {
		return Verdict{Note: "the drop's network namespace is not found"}
	}
	a, count, onHook, qdisc, err := n.tc.name(strconv.FormatUint(d.Netns, 10), path, d.Dev, hook)
	switch {
	case err != nil:
		// Said once; the blocks stay as they were.
		n.warn("tc's actions cannot be named: " + err.Error())
		return Verdict{}
	case count == 1 && !full && onHook > 1:
		return Verdict{Kind: "tc", Dev: d.Dev, Hook: hook, Qdisc: qdisc}
	case count == 1:
		return Verdict{Kind: "tc", Dev: d.Dev, Hook: hook, Qdisc: qdisc,
			Text: fmt.Sprintf("filter protocol %s pref %d %s chain %d handle %s, action order %d: %s", a.protocol, a.pref, a.kind, a.chain, a.handle, a.order, a.action)}
	case count > 1:
		return Verdict{Note: fmt.Sprintf("tc: %d actions' drop counters on dev %s %s rose since the last drop, which of them dropped this one cannot be told", count, d.Dev, hook)}
	}
	// No classic action counted it: a BPF program's verdict, which the
	// tools name by the program.
	return Verdict{}
}
