package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/scripts"
)

// tcFilterView is one filter's action as `tc -s -j filter show` prints
// it: what the test expects whydrop's tc line and dropcount's label to say.
type tcFilterView struct {
	Protocol string `json:"protocol"`
	Pref     int    `json:"pref"`
	Kind     string `json:"kind"`
	Chain    int    `json:"chain"`
	Options  struct {
		Fh      string `json:"fh"`
		Actions []struct {
			Order   int    `json:"order"`
			Kind    string `json:"kind"`
			Mirred  string `json:"mirred_action"`
			Dir     string `json:"direction"`
			ToDev   string `json:"to_dev"`
			Control struct {
				Type string `json:"type"`
			} `json:"control_action"`
			Stats struct {
				Packets    uint64 `json:"packets"`
				Drops      uint64 `json:"drops"`
				Overlimits uint64 `json:"overlimits"`
			} `json:"stats"`
		} `json:"actions"`
	} `json:"options"`
}

// tcFilterAt is the filter with an action at pref on a hook of dev in ns,
// as tc lists it.
func tcFilterAt(t *testing.T, ns, dev, hook string, pref int) tcFilterView {
	t.Helper()
	out, err := exec.Command("tc", "-n", ns, "-s", "-j", "filter", "show", "dev", dev, hook).Output()
	if err != nil {
		t.Fatalf("tc filter show dev %s %s: %v", dev, hook, err)
	}
	var fs []tcFilterView
	if err := json.Unmarshal(out, &fs); err != nil {
		t.Fatalf("tc -j: %v: %s", err, out)
	}
	for _, f := range fs {
		if f.Pref == pref && len(f.Options.Actions) == 1 {
			return f
		}
	}
	t.Fatalf("no filter with an action at pref %d on %s %s:\n%s", pref, dev, hook, out)
	return tcFilterView{}
}

// tcLine is whydrop's tc line for a mirred action that drops (its target
// down), from tc's own listing.
func tcLine(f tcFilterView, dev, hook string) string {
	a := f.Options.Actions[0]
	return fmt.Sprintf("  tc     dev %s %s (clsact), filter protocol %s pref %d %s chain %d handle %s, action order %d: %s (%s %s to device %s) %s; %s is down\n",
		dev, hook, f.Protocol, f.Pref, f.Kind, f.Chain, f.Options.Fh, a.Order, a.Kind, a.Dir, a.Mirred, a.ToDev, a.Control.Type, a.ToDev)
}

// tcDropNamespaces makes two namespaces joined by v1 and v2
// (10.200.43.1, .2) whose v2 has a clsact qdisc and three u32 filters,
// each a mirred redirect: on ingress, datagrams to port 7201 to x1 (a
// veth that is down: the kernel drops them, TC_INGRESS), to port 7203 to
// x3 (deleted after: the kernel takes them, no drop), to port 7204 to x5
// (down too); on egress, to port 7202, to x1 (TC_EGRESS). It returns the
// namespaces and the second's inode.
func tcDropNamespaces(t *testing.T) (string, string, uint64) {
	t.Helper()
	if _, err := exec.LookPath("tc"); err != nil {
		t.Fatalf("this test needs iproute2's tc to make its filters: %v", err)
	}
	ns1, ns2, inode := vethPair(t, 43)
	shIn(t, ns2,
		"ip link add x1 type veth peer name x2",
		"ip link add x5 type veth peer name x6",
		"ip link add x3 type veth peer name x4 && ip link set x3 up && ip link set x4 up",
		"tc qdisc add dev v2 clsact",
		"tc filter add dev v2 ingress protocol ip pref 30 u32 match ip dport 7201 0xffff action mirred egress redirect dev x1",
		"tc filter add dev v2 ingress protocol ip pref 31 u32 match ip dport 7203 0xffff action mirred egress redirect dev x3",
		"tc filter add dev v2 ingress protocol ip pref 32 u32 match ip dport 7204 0xffff action mirred egress redirect dev x5",
		"tc filter add dev v2 egress protocol ip pref 40 u32 match ip dport 7202 0xffff action mirred egress redirect dev x1",
		"ip link del x3",
	)
	return ns1, ns2, inode
}

// tcDropTraffic sends two datagrams to each port of tcDropNamespaces;
// those to 7204, dropped on the hook 7201's were, 0.2 s after those: their
// blocks are named whether the first of 7201's is printed before them (its
// read sees one action's count risen) or after (two have: the one whose
// uses all came first is named first).
func tcDropTraffic(ns1, ns2 string) string {
	return strings.Join([]string{
		"ip netns exec " + ns1 + " " + sendCommand("10.200.43.2:7201", 2, 10, 0),
		"sleep 0.2",
		"ip netns exec " + ns1 + " " + sendCommand("10.200.43.2:7204", 2, 10, 0),
		"ip netns exec " + ns1 + " " + sendCommand("10.200.43.2:7203", 2, 10, 0),
		"ip netns exec " + ns2 + " " + sendCommand("10.200.43.1:7202", 2, 10, 0),
	}, "; ")
}

// TestWhydropNamesTCActions: datagrams dropped by tc mirred actions on a
// veth's clsact ingress (two) and egress (a redirect to a device that is
// down) are each named by whydrop as tc lists the filter and action: the
// device, hook and qdisc, the filter's protocol, pref, kind, chain and
// handle, the action; in text and in JSON. A redirect to a device that is
// gone is no drop (the kernel takes the packet): no block, though its
// action's overlimits rose, and they do not make the other drops
// ambiguous.
func TestWhydropNamesTCActions(t *testing.T) {
	ns1, ns2, _ := tcDropNamespaces(t)
	ingress := tcFilterAt(t, ns2, "v2", "ingress", 30)
	ingress2 := tcFilterAt(t, ns2, "v2", "ingress", 32)
	egress := tcFilterAt(t, ns2, "v2", "egress", 40)
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			before := tcFilterAt(t, ns2, "v2", "ingress", 31).Options.Actions[0].Stats.Overlimits
			out, _ := whydropBin(t, tcDropTraffic(ns1, ns2), "-f", format)
			if format == "json" {
				// Each drop is one printf object; its data is the block.
				var text strings.Builder
				for _, l := range strings.Split(out, "\n") {
					var rec struct {
						Type string `json:"type"`
						Data string `json:"data"`
					}
					if json.Unmarshal([]byte(l), &rec) == nil && rec.Type == "printf" {
						text.WriteString(rec.Data)
					}
				}
				out = text.String()
			}
			for _, c := range []struct {
				port       int
				src, dst   string
				hook, why  string
				f          tcFilterView
				wantBlocks int
			}{
				{7201, "10.200.43.1", "10.200.43.2", "ingress", "TC_INGRESS", ingress, 2},
				{7204, "10.200.43.1", "10.200.43.2", "ingress", "TC_INGRESS", ingress2, 2},
				{7202, "10.200.43.2", "10.200.43.1", "egress", "TC_EGRESS", egress, 2},
			} {
				head := fmt.Sprintf(`\S+ udp +%s:\d+ > %s:%d dev v2 .*\n`, regexp.QuoteMeta(c.src), regexp.QuoteMeta(c.dst), c.port)
				blocks := regexp.MustCompile(`(?m)^`+head+`(  .*\n)*`).FindAllString(out, -1)
				if len(blocks) != c.wantBlocks {
					t.Errorf("port %d: %d blocks, want %d:\n%s", c.port, len(blocks), c.wantBlocks, out)
				}
				want := tcLine(c.f, "v2", c.hook)
				for _, b := range blocks {
					if !strings.Contains(b, want) || !strings.Contains(b, "  why    "+c.why+": ") || strings.Contains(b, "  which  ") {
						t.Errorf("port %d: block lacks %q (or says which):\n%s", c.port, want, b)
					}
				}
			}
			if strings.Contains(out, ":7203 ") {
				t.Errorf("a redirect to a device that is gone printed as a drop:\n%s", out)
			}
			if after := tcFilterAt(t, ns2, "v2", "ingress", 31).Options.Actions[0].Stats.Overlimits; after != before+2 {
				t.Errorf("the redirect to a device that is gone counted %d overlimits, want 2: the case was not tested", after-before)
			}
		})
	}
}

// TestDropcountTCRuleLabel: dropcount labels tc's drops with the filter's
// device, hook, pref and handle and the action's order, as tc lists them,
// where the hook has that one action (egress); where it has several
// (ingress: three), with the device and hook alone, since one element
// counts every drop of the hook, whichever action drops it.
func TestDropcountTCRuleLabel(t *testing.T) {
	ns1, ns2, inode := tcDropNamespaces(t)
	tool, _ := scripts.Lookup("dropcount")
	text := strings.ReplaceAll(tool.Text, "/skb->protocol != 0 &&", fmt.Sprintf("/skb->protocol != 0 && netns == %d &&", inode))
	if text == tool.Text {
		t.Fatal("dropcount's predicate has changed: the test cannot select a namespace")
	}
	file := filepath.Join(t.TempDir(), "dropcount.st")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout := startCLI(t, file)
	inNetns(t, ns1, "true") // the namespaces are there before the traffic
	if out, err := exec.Command("sh", "-c", tcDropTraffic(ns1, ns2)).CombinedOutput(); err != nil {
		t.Fatalf("traffic: %v: %s", err, out)
	}
	got := stdout()
	f := tcFilterAt(t, ns2, "v2", "egress", 40)
	for _, c := range []struct {
		why, label string
		n          int
	}{
		{"TC_EGRESS", fmt.Sprintf("tc v2 egress pref %d handle %s order %d", f.Pref, f.Options.Fh, f.Options.Actions[0].Order), 2},
		{"TC_INGRESS", "tc v2 ingress", 4},
	} {
		re := regexp.MustCompile(fmt.Sprintf(`(?m)^@drops\[%s, \S+\+0x[0-9a-f]+, v2, %d \(netns:%s\), , , %s\]: %d$`, c.why, inode, ns2, regexp.QuoteMeta(c.label), c.n))
		if !re.MatchString(got) {
			t.Errorf("no line %s in:\n%s", re, got)
		}
	}
}
