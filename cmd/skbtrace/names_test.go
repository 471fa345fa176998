package main

import (
	"encoding/json"
	"fmt"
	"github.com/skbtrace/skbtrace/internal/syncbuf"
	"github.com/skbtrace/skbtrace/scripts"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestNamesIPNetns sends datagrams between two ip netns and checks that
// the output names them: netns and dev values with (netns:NAME) in text,
// pod (what the namespace is, where it is no pod's), podns and container
// as "-", and in JSON the IDs alone, numbers as before, with no pod
// fields for a namespace that is no pod's.
func TestNamesIPNetns(t *testing.T) {
	ns1, ns2, inum2 := vethPair(t, 31)
	const port = 4931
	script := fmt.Sprintf(`skb:* /l4proto == udp && dport == %d/ { print(dev, netns, pod, podns, container) }`, port)
	send := "ip netns exec " + ns1 + " " + sendCommand(fmt.Sprintf("10.200.31.2:%d", port), 2, 10, 0)
	code, out, errs := runCLI(t, "-e", script, "-c", send)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// v2 is in ns2: its events name ns2; v1's name ns1.
	want := regexp.MustCompile(fmt.Sprintf(`dev=v2 netns=%d \(netns:%s\) pod=netns:%s podns=- container=-$`, inum2, ns2, ns2))
	wantV1 := regexp.MustCompile(fmt.Sprintf(`dev=v1 netns=\d+ \(netns:%s\) pod=netns:%s podns=- container=-$`, ns1, ns1))
	var v1, v2 int
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		switch {
		case want.MatchString(l):
			v2++
		case wantV1.MatchString(l):
			v1++
		case strings.Contains(l, "dev=v"):
			t.Errorf("a line that does not name its namespace: %q", l)
		}
	}
	if v1 == 0 || v2 == 0 {
		t.Fatalf("%d lines named %s on v1 and %d %s on v2, want some of each:\n%s", v1, ns1, v2, ns2, out)
	}

	code, out, errs = runCLI(t, "-f", "json", "-e", script, "-c", send)
	if code != 0 {
		t.Fatalf("-f json: exit %d: %s", code, errs)
	}
	seen := false
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct {
			Type string
			Pod  *string
			Data map[string]any
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Type != "event" {
			continue
		}
		if ev.Data["dev"] != "v2" {
			continue
		}
		seen = true
		if n, ok := ev.Data["netns"].(float64); !ok || uint64(n) != inum2 {
			t.Errorf("JSON netns %v, want the number %d: %s", ev.Data["netns"], inum2, l)
		}
		if ev.Data["pod"] != "netns:"+ns2 || ev.Data["podns"] != "-" {
			t.Errorf("JSON pod %v podns %v: %s", ev.Data["pod"], ev.Data["podns"], l)
		}
		if ev.Pod != nil {
			t.Errorf("a namespace that is no pod's has a pod field: %s", l)
		}
	}
	if !seen {
		t.Fatalf("no JSON event on v2:\n%s", out)
	}

	// --names=false: the IDs alone.
	code, out, _ = runCLI(t, "--names=false", "-e", script, "-c", send)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("dev=v2 netns=%d pod=netns:%d podns=- container=-\n", inum2, inum2)) {
		t.Errorf("--names=false: exit %d, want netns=%d alone:\n%s", code, inum2, out)
	}
}

// TestNetnsFilterFollowsNewNamespace starts tracing with --netns NAME
// before the namespace exists: the namespace is made while tracing, and
// its datagrams are traced from then on, while the host's, sent to the
// same port meanwhile, are not.
func TestNetnsFilterFollowsNewNamespace(t *testing.T) {
	const ns, port = "skbt32late", 4932
	exec.Command("ip", "netns", "del", ns).Run()
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	host, err := os.Readlink("/proc/thread-self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	hostInode := strings.TrimSuffix(strings.TrimPrefix(host, "net:["), "]")
	// Both send for up to 4 s, every 0.1 s; the namespace's sender waits
	// for nothing: what it sends before the resolver has seen the
	// namespace is not traced, what it sends after is.
	hostSend := sendCommand(fmt.Sprintf("127.0.0.1:%d", port), 1, 5, 0)
	nsSend := "ip netns exec " + ns + " " + sendCommand(fmt.Sprintf("127.0.0.1:%d", port), 1, 7, 0)
	cmd := fmt.Sprintf("sh -c 'ip netns add %s && ip -n %s link set lo up && for i in $(seq 40); do %s; %s; sleep 0.1; done'", ns, ns, nsSend, hostSend)
	// stderr hears the resolver's goroutine too: a buffer safe for that.
	var outb, errb syncbuf.Buffer
	code := run([]string{"--netns", ns, "-e", fmt.Sprintf(`skb:* /l4proto == udp && dport == %d/ { print(netns, len) }`, port), "-c", cmd}, &outb, &errb)
	out, errs := outb.String(), errb.String()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "no network namespace matches --netns "+ns+" yet") {
		t.Errorf("stderr does not say that nothing matched at the start:\n%s", errs)
	}
	inode, err := exec.Command("ip", "netns", "exec", ns, "stat", "-L", "-c", "%i", "/proc/self/ns/net").Output()
	if err != nil {
		t.Fatal(err)
	}
	nsInode := strings.TrimSpace(string(inode))
	// The namespace may join before the resolver has named it: then
	// stderr says its inode alone.
	if !regexp.MustCompile(`now tracing (netns:` + ns + ` \(network namespace ` + nsInode + `\)|network namespace ` + nsInode + `)\n`).MatchString(errs) {
		t.Errorf("stderr does not say when the namespace joined:\n%s", errs)
	}
	var traced int
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(l, "netns=") {
			continue
		}
		switch {
		case strings.Contains(l, "netns="+nsInode+" (netns:"+ns+")"):
			traced++
		case strings.Contains(l, "netns="+hostInode):
			t.Errorf("the host's datagram was traced: %q", l)
		default:
			t.Errorf("a line of another namespace: %q", l)
		}
	}
	if traced == 0 {
		t.Fatalf("none of %s's datagrams was traced:\n%s\nstderr:\n%s", ns, out, errs)
	}
	if _, err := strconv.ParseUint(nsInode, 10, 64); err != nil {
		t.Fatalf("the namespace's inode: %q", nsInode)
	}
}

// TestToolsWithPodFilter runs every bundled tool that this kernel runs with
// --netns: the pod filters' test goes in front of each of its probes (the
// device's, the socket's or the task's namespace) and the programs pass
// the verifier.
func TestToolsWithPodFilter(t *testing.T) {
	ns1, _, _ := vethPair(t, 34)
	for _, tool := range scripts.All() {
		t.Run(tool.Name, func(t *testing.T) {
			args := []string{"--duration", "300ms", tool.Name}
			if strings.Contains(tool.Text, "$1") && (tool.Name == "pktpath" || tool.Name == "funcgraph") {
				args = append(args, "0x1")
			}
			code, _, errs := runCLI(t, append([]string{"--netns", ns1}, args...)...)
			if code != 0 {
				// What fails here fails without the filter too (skbret:
				// on the tracepoint fallback): then it is not the filter's.
				if c, _, _ := runCLI(t, args...); c != 0 {
					t.Skipf("%s does not run on this kernel without --netns either", tool.Name)
				}
				t.Fatalf("exit %d with --netns: %s", code, errs)
			}
		})
	}
}

// TestTcpconnectNetns runs tcpconnect with --netns while connections are
// opened both in that namespace and on the host: the tool's tracepoint
// fires in softirq for the SYN-ACK, so the filter must test the socket's
// namespace, not the running task's: the namespace's connections are
// printed, the host's are not.
func TestTcpconnectNetns(t *testing.T) {
	ns1, _, _ := vethPair(t, 35)
	inNs, onHost := closedTCPPort(t), closedTCPPort(t)
	for inNs == onHost {
		onHost = closedTCPPort(t)
	}
	cmd := fmt.Sprintf("sh -c 'ip netns exec %s %s & %s; wait'", ns1,
		connectCommand(fmt.Sprintf("127.0.0.1:%d", inNs), 2, 100), connectCommand(fmt.Sprintf("127.0.0.1:%d", onHost), 2, 100))
	code, out, errs := runCLI(t, "--netns", ns1, "-c", cmd, "tcpconnect")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	re := regexp.MustCompile(`(?m) 127\.0\.0\.1 +\d+ +127\.0\.0\.1 +(\d+) +ESTABLISHED$`)
	got := map[string]int{}
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		got[m[1]]++
	}
	if got[strconv.Itoa(inNs)] != 2 || got[strconv.Itoa(onHost)] != 0 {
		t.Errorf("connections by port %v: want 2 to %d (in %s) and none to %d (the host's):\n%s", got, inNs, ns1, onHost, out)
	}
}
