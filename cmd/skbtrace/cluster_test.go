package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/internal/k8stest"
)

// The namespace of the cluster tests' pods, and the ports B serves and
// drops on.
const (
	e2eNS      = "skbt-e2e"
	e2eUDPPort = 7101 // B's main: udp-serve
	e2eTCPPort = 7102 // B's second container, "tcp": tcp-serve
	e2eDropped = 7103 // B's nftables ruleset drops UDP to it
	e2eTable   = "skbt_e2e"
)

// clusterFixture is one single-node cluster, started once for all the
// cluster tests, with pods A and B: B serves UDP and TCP and drops UDP to
// e2eDropped with an nftables rule in its own network namespace.
type clusterFixture struct {
	k    *k8stest.K8s
	a, b *kpod
}

// TestCluster runs skbtrace on a real single-node cluster (etcd,
// kube-apiserver, kubelet, containerd; k8stest.Cluster) whose pods talk
// over the pod network, reading pod names from kubelet's containerd
// through --cri-socket: the names in text, whydrop, timelines and JSON,
// Prometheus' labels, and the pod filters, those of a pod that appears
// while tracing too.
func TestCluster(t *testing.T) {
	start := time.Now()
	k := k8stest.Cluster(t)
	t.Logf("cluster ready in %s", time.Since(start).Round(time.Millisecond))
	k.EnsureNamespace(t, e2eNS)
	f := &clusterFixture{k: k}
	f.a = clusterPod(t, k, k.RunPod(t, e2eNS, "a"))
	bspec := k.PodSpec(e2eNS, "b", "udp-serve", strconv.Itoa(e2eUDPPort))
	tcp := bspec.Spec.Containers[0]
	tcp.Name, tcp.Args = "tcp", []string{"tcp-serve", strconv.Itoa(e2eTCPPort)}
	bspec.Spec.Containers = append(bspec.Spec.Containers, tcp)
	f.b = clusterPod(t, k, k.CreatePod(t, bspec))
	t.Logf("pods up in %s: A %s, B %s", time.Since(start).Round(time.Millisecond), f.a, f.b)
	f.b.nft(t, fmt.Sprintf(`table inet %s {
	chain input {
		type filter hook input priority 0; policy accept;
		udp dport %d drop
	}
}`, e2eTable, e2eDropped))
	t.Cleanup(func() {
		if err := f.b.tryNft("", "delete", "table", "inet", e2eTable); err != nil {
			t.Errorf("removing B's ruleset: %v", err)
		}
	})

	t.Run("Names", f.testNames)
	t.Run("Whydrop", f.testWhydrop)
	t.Run("Timeline", f.testTimeline)
	t.Run("TimelineJSON", f.testTimelineJSON)
	t.Run("EventsJSON", f.testEventsJSON)
	t.Run("Metrics", f.testMetrics)
	t.Run("LatePod", f.testLatePod)
	t.Run("PodFilter", f.testPodFilter)
	t.Logf("cluster tests done in %s", time.Since(start).Round(time.Millisecond))
}

// criFlag is the flag that points skbtrace at kubelet's containerd.
func (f *clusterFixture) criFlag() string { return "--cri-socket=" + f.k.CRI.Socket }

// eventLine is a text print() line: time, CPU, skb, function, then the
// fields.
var eventLine = regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{6} +\d+ 0x[0-9a-f]+ (\S+) +(.*)$`)

// fieldNetns is the netns=INODE of a line, 0 if none.
func fieldNetns(line string) uint64 {
	m := regexp.MustCompile(`\bnetns=(\d+)`).FindStringSubmatch(line)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseUint(m[1], 10, 64)
	return n
}

// testNames: A sends UDP and TCP to B; every event in A's network
// namespace names A (the netns, the pod and podns builtins), every event
// in B's names B, the addresses carry their pods, and the host-side veths
// theirs.
func (f *clusterFixture) testNames(t *testing.T) {
	a, b := f.a, f.b
	script := fmt.Sprintf(`skb:* /l4proto == udp && dport == %d/ { print(dev, netns, saddr, daddr, pod, podns) }
skb:* /l4proto == tcp && dport == %d/ { print(dport, dev, netns, saddr, daddr, pod, podns) }`, e2eUDPPort, e2eTCPPort)
	tr := startClusterTrace(t, f.criFlag(), "-e", script)
	a.udpSend(t, b, e2eUDPPort, 5)
	a.exec(t, k8stest.ContainerName, "tcp-send", fmt.Sprintf("%s:%d", b.IP, e2eTCPPort), "3")
	// Each protocol's packets, sent in A and received in B: the UDP
	// datagrams went first.
	tcpInB := regexp.MustCompile(fmt.Sprintf(`(?m) dport=%d dev=eth0 netns=%d `, e2eTCPPort, b.Netns))
	udpInB := regexp.MustCompile(fmt.Sprintf(`(?m)^\S+ +\d+ 0x[0-9a-f]+ \S+ +dev=eth0 netns=%d `, b.Netns))
	tr.waitFor("UDP and TCP events in B's network namespace", 20*time.Second, func(stdout, _ string) bool {
		return tcpInB.MatchString(stdout) && udpInB.MatchString(stdout)
	})
	stdout, stderr := tr.stop()
	counts := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		m := eventLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		// The TCP probe's lines start with the port; B's answers to A
		// are not selected (dport is B's port).
		fields, proto := m[2], "udp"
		if tcp := fmt.Sprintf("dport=%d ", e2eTCPPort); strings.HasPrefix(fields, tcp) {
			fields, proto = strings.TrimPrefix(fields, tcp), "tcp"
		}
		addrs := fmt.Sprintf("saddr=%s (%s) daddr=%s (%s) ", a.IP, a.label(), b.IP, b.label())
		if !strings.Contains(fields, addrs) {
			t.Errorf("the addresses are not A's and B's, each with its pod (%q): %s", addrs, l)
		}
		switch netns := fieldNetns(fields); netns {
		case a.Netns:
			counts["a "+proto]++
			if want := fmt.Sprintf("dev=eth0 netns=%d (%s) ", a.Netns, a.label()); !strings.HasPrefix(fields, want) {
				t.Errorf("an event in A's namespace does not start %q: %s", want, l)
			}
			if !strings.HasSuffix(fields, " pod=a podns="+e2eNS) {
				t.Errorf("an event in A's namespace does not end pod=a podns=%s: %s", e2eNS, l)
			}
		case b.Netns:
			counts["b "+proto]++
			if want := fmt.Sprintf("dev=eth0 netns=%d (%s) ", b.Netns, b.label()); !strings.HasPrefix(fields, want) {
				t.Errorf("an event in B's namespace does not start %q: %s", want, l)
			}
			if !strings.HasSuffix(fields, " pod=b podns="+e2eNS) {
				t.Errorf("an event in B's namespace does not end pod=b podns=%s: %s", e2eNS, l)
			}
		default:
			counts["other"]++
			// The node's side: the veths name their pods; the bridge
			// has none.
			if strings.Contains(fields, "pod=a ") || strings.Contains(fields, "pod=b ") {
				t.Errorf("an event outside the pods' namespaces says it is a pod's: %s", l)
			}
			if strings.HasPrefix(fields, "dev="+a.Veth+" ") && !strings.HasPrefix(fields, fmt.Sprintf("dev=%s (%s) ", a.Veth, a.label())) ||
				strings.HasPrefix(fields, "dev="+b.Veth+" ") && !strings.HasPrefix(fields, fmt.Sprintf("dev=%s (%s) ", b.Veth, b.label())) {
				t.Errorf("a pod's host-side veth is not named by its pod: %s", l)
			}
		}
	}
	for _, k := range []string{"a udp", "b udp", "a tcp", "b tcp"} {
		if counts[k] == 0 {
			t.Errorf("no %s events in %s's namespace (counts %v)", k[2:], k[:1], counts)
		}
	}
	for _, p := range []*kpod{a, b} {
		if want := fmt.Sprintf("dev=%s (%s) ", p.Veth, p.label()); !strings.Contains(stdout, want) {
			t.Errorf("no event on %s's host-side veth names it (%q):\n%s", p.label(), want, stdout)
		}
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}

// testWhydrop: B's nftables rule drops what A sends to e2eDropped;
// whydrop's first line names A and B at the ends, and B at the netns.
func (f *clusterFixture) testWhydrop(t *testing.T) {
	a, b := f.a, f.b
	tr := startClusterTrace(t, f.criFlag(), "whydrop")
	a.udpSend(t, b, e2eDropped, 3)
	head := regexp.MustCompile(fmt.Sprintf(`(?m)^\S+ udp +%s:\d+ \(%s\) > %s:%d \(%s\) dev eth0 netns %d \(%s\)\n((?:  .*\n)*)`,
		regexp.QuoteMeta(a.IP), regexp.QuoteMeta(a.label()), regexp.QuoteMeta(b.IP), e2eDropped, regexp.QuoteMeta(b.label()), b.Netns, regexp.QuoteMeta(b.label())))
	tr.waitFor("a drop naming A and B", 20*time.Second, func(stdout, _ string) bool {
		m := head.FindStringSubmatch(stdout)
		return m != nil && strings.Contains(m[1], "  rule ")
	})
	stdout, _ := tr.stop()
	blk := head.FindStringSubmatch(stdout)[1]
	for _, want := range []string{
		"  why    NETFILTER_DROP:",
		"  rule   hook input, table " + e2eTable + ", chain input\n",
	} {
		if !strings.Contains(blk, want) {
			t.Errorf("the drop's block lacks %q:\n%s", want, blk)
		}
	}
}

// timelineHeader is a timeline block's first line.
var timelineHeader = regexp.MustCompile(`(?m)^skb 0x[0-9a-f]+ at \d\d:\d\d:\d\d\.\d{6}( packet 0x[0-9a-f]+)?( \(.*\))?$`)

// testTimeline: one datagram from A to a port of B nothing serves; its
// block's header names A, then B.
func (f *clusterFixture) testTimeline(t *testing.T) {
	a, b := f.a, f.b
	const port = 7104
	tr := startClusterTrace(t, f.criFlag(), "--timeline", "--filter", fmt.Sprintf("udp port %d", port))
	a.udpSend(t, b, port, 1)
	tr.waitFor("the datagram's block, to its drop", 20*time.Second, func(stdout, _ string) bool {
		return strings.Contains(stdout, "reason=NO_SOCKET")
	})
	stdout, _ := tr.stop()
	var blocks []string
	for _, blk := range strings.Split(strings.TrimSpace(stdout), "\n\n") {
		if strings.Contains(blk, "net_dev_queue") || strings.Contains(blk, "reason=NO_SOCKET") {
			blocks = append(blocks, blk)
		}
	}
	if len(blocks) != 1 {
		t.Fatalf("%d blocks with the datagram's hops, want 1:\n%s", len(blocks), stdout)
	}
	lines := strings.Split(blocks[0], "\n")
	want := fmt.Sprintf(" (%s > %s)", a.label(), b.label())
	if !timelineHeader.MatchString(lines[0]) || !strings.HasSuffix(lines[0], want) {
		t.Errorf("the block's header %q does not end %q:\n%s", lines[0], want, blocks[0])
	}
	// The hops on the way: A's namespace, the node's veths, B's.
	for _, w := range []string{
		fmt.Sprintf("netns=%d (%s)", a.Netns, a.label()),
		fmt.Sprintf("netns=%d (%s)", b.Netns, b.label()),
	} {
		if !strings.Contains(blocks[0], w) {
			t.Errorf("no hop has %q:\n%s", w, blocks[0])
		}
	}
}

// testTimelineJSON: the same with -f json: the block's "pods" are A, then
// B.
func (f *clusterFixture) testTimelineJSON(t *testing.T) {
	a, b := f.a, f.b
	const port = 7105
	tr := startClusterTrace(t, f.criFlag(), "-f", "json", "--timeline", "--filter", fmt.Sprintf("udp port %d", port))
	a.udpSend(t, b, port, 1)
	tr.waitFor("the datagram's block, to its drop", 20*time.Second, func(stdout, _ string) bool {
		return strings.Contains(stdout, `"reason":"NO_SOCKET"`)
	})
	stdout, _ := tr.stop()
	type hop struct {
		Func string         `json:"func"`
		Data map[string]any `json:"data"`
	}
	var found []struct {
		Type string   `json:"type"`
		Pods []string `json:"pods"`
		Hops []hop    `json:"hops"`
	}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var blk struct {
			Type string   `json:"type"`
			Pods []string `json:"pods"`
			Hops []hop    `json:"hops"`
			Drop map[string]any
		}
		if err := json.Unmarshal([]byte(l), &blk); err != nil {
			t.Fatalf("not a JSON object: %q: %v", l, err)
		}
		if blk.Type == "timeline" && blk.Drop != nil {
			found = append(found, struct {
				Type string   `json:"type"`
				Pods []string `json:"pods"`
				Hops []hop    `json:"hops"`
			}{blk.Type, blk.Pods, blk.Hops})
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d blocks with a drop, want 1:\n%s", len(found), stdout)
	}
	if got, want := strings.Join(found[0].Pods, " > "), a.label()+" > "+b.label(); got != want {
		t.Errorf(`"pods": %q, want %q:\n%s`, found[0].Pods, want, stdout)
	}
}

// testEventsJSON: -f json print() events carry the pod and namespace of
// their network namespace, or of their host-side veth.
func (f *clusterFixture) testEventsJSON(t *testing.T) {
	a, b := f.a, f.b
	tr := startClusterTrace(t, f.criFlag(), "-f", "json", "-e", fmt.Sprintf(`skb:* /l4proto == udp && dport == %d/ { print(dev, netns) }`, e2eUDPPort))
	a.udpSend(t, b, e2eUDPPort, 2)
	tr.waitFor("events in B's namespace", 20*time.Second, func(stdout, _ string) bool {
		return strings.Contains(stdout, fmt.Sprintf(`"netns":%d`, b.Netns))
	})
	stdout, _ := tr.stop()
	counts := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ev struct {
			Type      string `json:"type"`
			Pod       string `json:"pod"`
			Namespace string `json:"namespace"`
			Data      struct {
				Dev   string `json:"dev"`
				Netns uint64 `json:"netns"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not a JSON object: %q: %v", l, err)
		}
		if ev.Type != "event" {
			continue
		}
		var want string
		switch {
		case ev.Data.Netns == a.Netns, ev.Data.Dev == a.Veth:
			want = "a"
		case ev.Data.Netns == b.Netns, ev.Data.Dev == b.Veth:
			want = "b"
		}
		counts[want]++
		if want == "" && (ev.Pod != "" || ev.Namespace != "") {
			t.Errorf("an event of no pod's namespace nor veth has pod %q, namespace %q: %s", ev.Pod, ev.Namespace, l)
		}
		if want != "" && (ev.Pod != want || ev.Namespace != e2eNS) {
			t.Errorf("pod %q, namespace %q, want %s/%s: %s", ev.Pod, ev.Namespace, e2eNS, want, l)
		}
	}
	if counts["a"] == 0 || counts["b"] == 0 {
		t.Errorf("events of A %d, of B %d:\n%s", counts["a"], counts["b"], stdout)
	}
}

// testMetrics: dropcount under --metrics, scraped by a real Prometheus:
// the drops of B's ruleset are series of B's netns with B's namespace and
// pod as labels.
func (f *clusterFixture) testMetrics(t *testing.T) {
	a, b := f.a, f.b
	addr := freePort(t)
	startClusterTrace(t, f.criFlag(), "--metrics", addr, "dropcount")
	prom := startPrometheus(t, map[string]string{k8stest.NodeName: addr})
	prom.waitQuery(`up`, "node="+k8stest.NodeName+": 1", "node")
	a.udpSend(t, b, e2eDropped, 4)
	prom.waitQuery(fmt.Sprintf(`sum by (namespace, pod, table, chain) (skbtrace_drops_total{netns="%d", reason="NETFILTER_DROP"})`, b.Netns),
		fmt.Sprintf("namespace=%s,pod=b,table=%s,chain=input: 4", e2eNS, e2eTable), "namespace", "pod", "table", "chain")
	// Every series of B's netns says it is B's; none of another
	// namespace does.
	for _, s := range prom.query(`skbtrace_drops_total`, 0) {
		inB := s.Metric["netns"] == strconv.FormatUint(b.Netns, 10)
		if isB := s.Metric["namespace"] == e2eNS && s.Metric["pod"] == "b"; inB != isB {
			t.Errorf("series %v: netns and pod labels disagree (B's netns is %d)", s.Metric, b.Netns)
		}
	}
}

// testLatePod: --pod skbt-e2e/late-* alone, before such a pod exists;
// when late-1 is created skbtrace says it traces it, and then prints the
// hops of its packets, and none of A's sent at the same time.
func (f *clusterFixture) testLatePod(t *testing.T) {
	a, b, k := f.a, f.b, f.k
	tr := startClusterTrace(t, f.criFlag(), "--pod", e2eNS+"/late-*")
	if _, stderr := tr.output(); !strings.Contains(stderr, "no network namespace matches --pod "+e2eNS+"/late-* yet") {
		t.Errorf("skbtrace does not say nothing matches yet:\n%s", stderr)
	}
	late := clusterPod(t, k, k.RunPod(t, e2eNS, "late-1"))
	now := fmt.Sprintf("skbtrace: now tracing %s (network namespace %d)\n", late.label(), late.Netns)
	tr.waitFor("it says it traces "+late.label(), 20*time.Second, func(_, stderr string) bool { return strings.Contains(stderr, now) })
	late.udpSend(t, b, e2eUDPPort, 3)
	a.udpSend(t, b, e2eUDPPort, 3)
	lateHop := hopOf(late, b)
	tr.waitFor("the hops of late-1's datagrams", 20*time.Second, func(stdout, _ string) bool {
		return len(lateHop.FindAllString(stdout, -1)) >= 3
	})
	k.DeletePod(t, e2eNS, late.Name)
	gone := fmt.Sprintf("skbtrace: no longer tracing %s (network namespace %d): it is gone\n", late.label(), late.Netns)
	tr.waitFor("it says "+late.label()+" is gone", 20*time.Second, func(_, stderr string) bool { return strings.Contains(stderr, gone) })
	stdout, _ := tr.stop()
	checkOnlyPod(t, stdout, late, a)
}

// hopOf matches a --filter line's packet from p to B's UDP port, as
// tcpdump prints it.
func hopOf(p, b *kpod) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`(?m) %s\.\d+ > %s\.%d: UDP`, regexp.QuoteMeta(p.IP), regexp.QuoteMeta(b.IP), e2eUDPPort))
}

// testPodFilter: --pod skbt-e2e/a alone: A's packets to B are printed,
// none of a third pod C's, which talks to B only.
func (f *clusterFixture) testPodFilter(t *testing.T) {
	a, b, k := f.a, f.b, f.k
	c := clusterPod(t, k, k.RunPod(t, e2eNS, "c"))
	tr := startClusterTrace(t, f.criFlag(), "--pod", e2eNS+"/a")
	c.udpSend(t, b, e2eUDPPort, 3)
	a.udpSend(t, b, e2eUDPPort, 3)
	c.udpSend(t, b, e2eUDPPort, 3)
	aHop := hopOf(a, b)
	tr.waitFor("the hops of A's datagrams", 20*time.Second, func(stdout, _ string) bool {
		return len(aHop.FindAllString(stdout, -1)) >= 3
	})
	stdout, _ := tr.stop()
	checkOnlyPod(t, stdout, a, c)
}

// checkOnlyPod checks --pod's output: every line is a hop in p's network
// namespace, named by p, or a hop with no device yet; none is of other's
// packets (its address or its name).
func checkOnlyPod(t *testing.T, stdout string, p, other *kpod) {
	t.Helper()
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		m := eventLine.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("not an event line: %q", l)
			continue
		}
		n++
		// A hop with no device yet (a datagram at its socket) is let
		// through by its socket's namespace, and prints netns=0.
		if !strings.HasPrefix(m[2], "dev= netns=0 ") && !strings.Contains(m[2], fmt.Sprintf(" netns=%d (%s) ", p.Netns, p.label())) {
			t.Errorf("a hop outside %s's namespace (%d): %s", p.label(), p.Netns, l)
		}
		if strings.Contains(l, other.IP+".") || strings.Contains(l, other.label()) {
			t.Errorf("a hop of %s's packets: %s", other.label(), l)
		}
	}
	if n == 0 {
		t.Errorf("no hops of %s", p.label())
	}
	if t.Failed() {
		t.Logf("stdout:\n%s", stdout)
	}
}
