package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/scripts"
)

// closedTCPPort returns a loopback TCP port nobody listens on.
func closedTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// connectClosed is a -c command that connects to a closed TCP port on
// loopback n times over IPv4 and m times over IPv6. The connections are
// refused by design: the command exits 0 all the same.
func connectClosed(port, n, m int) string {
	return fmt.Sprintf(`bash -c 'for i in $(seq %d); do (echo > /dev/tcp/127.0.0.1/%d) 2>/dev/null; done; for i in $(seq %d); do (echo > /dev/tcp/::1/%d) 2>/dev/null; done; true'`, n, port, m, port)
}

// TestToolsAreListedAndLoad checks --tools and that every bundled tool
// compiles and passes the verifier.
func TestToolsAreListedAndLoad(t *testing.T) {
	code, out, _ := runCLI(t, "--tools")
	all := scripts.All()
	if code != 0 || len(all) < 5 {
		t.Fatalf("exit %d, %d tools", code, len(all))
	}
	for _, tool := range all {
		if tool.Summary == "" || !strings.Contains(out, fmt.Sprintf("%-12s %s\n", tool.Name, tool.Summary)) {
			t.Errorf("--tools lacks %s with its summary:\n%s", tool.Name, out)
		}
		if !strings.HasPrefix(tool.Text, "#!/usr/bin/env skbtrace\n") {
			t.Errorf("%s: no shebang line", tool.Name)
		}
		// A tool's arguments are required where it uses them as numbers.
		args := map[string][]string{"pktpath": {"0xdeadbeef"}, "funcgraph": {"0xdeadbeef"}}[tool.Name]
		code, dump, errs := runCLI(t, append([]string{"-d", tool.Name}, args...)...)
		if code != 0 || !strings.Contains(dump, "verifier processed") {
			t.Errorf("%s does not load: %s", tool.Name, errs)
		}
	}
}

// TestShebangExecutes runs a script file as a program, through
// #!/usr/bin/env skbtrace, with a positional argument.
func TestShebangExecutes(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "skbtrace")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, out)
	}
	script := filepath.Join(dir, "hello.st")
	text := "#!/usr/bin/env skbtrace\nBEGIN { printf(\"hello %s\\n\", $1); exit() }\n"
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, "world")
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil || string(out) != "hello world\n" {
		t.Errorf("./hello.st world: %q, %v", out, err)
	}
}

var dropLine = regexp.MustCompile(`^(\d\d:\d\d:\d\d) (\d+) +(\S+) +([46]) +(\S+) +(\S+) +(\S+) +> (\S+)$`)

// TestTcpdrop connects to a closed port, 3 times over IPv4 and 2 over IPv6:
// tcpdrop prints each dropped SYN, field by field, with its stack.
func TestTcpdrop(t *testing.T) {
	port := closedTCPPort(t)
	code, out, errs := runCLI(t, "-c", connectClosed(port, 3, 2), "tcpdrop")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	blocks := strings.Split(strings.TrimSuffix(out, "\n"), "\n\n")
	header := "TIME     PID     COMM             IP STATE        REASON                   SADDR:SPORT             DADDR:DPORT"
	if !strings.HasPrefix(blocks[0], header+"\n") {
		t.Fatalf("header:\n%s", out)
	}
	blocks[0] = strings.TrimPrefix(blocks[0], header+"\n")
	var v4, v6 int
	for _, b := range blocks {
		lines := strings.Split(b, "\n")
		m := dropLine.FindStringSubmatch(lines[0])
		if m == nil {
			t.Errorf("line %q does not parse", lines[0])
			continue
		}
		if !strings.HasSuffix(m[8], fmt.Sprintf(":%d", port)) {
			continue // another TCP drop on this machine meanwhile
		}
		if m[3] != "bash" || m[5] != "-" || m[6] != "NO_SOCKET" {
			t.Errorf("comm %s, state %s, reason %s in %q", m[3], m[5], m[6], lines[0])
		}
		src, dst, rcv := "127.0.0.1:", fmt.Sprintf("127.0.0.1:%d", port), "tcp_v4_rcv+0x"
		if m[4] == "6" {
			src, dst, rcv = "[::1]:", fmt.Sprintf("[::1]:%d", port), "tcp_v6_rcv+0x"
			v6++
		} else {
			v4++
		}
		if !strings.HasPrefix(m[7], src) || m[8] != dst {
			t.Errorf("endpoints %s > %s, want %s* > %s", m[7], m[8], src, dst)
		}
		if len(lines) < 3 || !strings.Contains(b, "\n        "+rcv) {
			t.Errorf("no stack through %s:\n%s", rcv, b)
		}
	}
	if v4 != 3 || v6 != 2 {
		t.Errorf("%d IPv4 and %d IPv6 drops, want 3 and 2:\n%s", v4, v6, out)
	}
}

// TestTcpreset: each connection to a closed port is a reset sent by the
// listener side's kernel and one received by the connecting socket.
func TestTcpreset(t *testing.T) {
	port := closedTCPPort(t)
	code, out, errs := runCLI(t, "-c", connectClosed(port, 2, 1), "tcpreset")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[0], "TIME     DIR      STATE") {
		t.Fatalf("want a header and 6 lines:\n%s", out)
	}
	re := regexp.MustCompile(`^\d\d:\d\d:\d\d (sent|received) +(\S+) +(\S+) +(\S+) +> (\S+)$`)
	count := map[string]int{}
	for _, l := range lines[1:] {
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("line %q does not parse", l)
			continue
		}
		local, remote := m[4], m[5]
		closed := fmt.Sprintf(":%d", port)
		switch m[1] {
		case "sent":
			if m[2] != "-" || m[3] != "NO_SOCKET" || !strings.HasSuffix(local, closed) {
				t.Errorf("sent: %q", l)
			}
		case "received":
			if m[2] != "SYN_SENT" || m[3] != "-" || !strings.HasSuffix(remote, closed) {
				t.Errorf("received: %q", l)
			}
		}
		family := "4"
		if strings.HasPrefix(local, "[::1]") {
			family = "6"
		}
		count[m[1]+family]++
	}
	if count["sent4"] != 2 || count["received4"] != 2 || count["sent6"] != 1 || count["received6"] != 1 {
		t.Errorf("counts %v:\n%s", count, out)
	}
}

// TestDropwatch sends 4 datagrams to a closed port: the first interval
// counts them under NO_SOCKET, at the UDP receive function.
func TestDropwatch(t *testing.T) {
	port := closedUDPPort(t)
	traffic := fmt.Sprintf(`bash -c 'for i in 1 2 3 4; do printf x > /dev/udp/127.0.0.1/%d; done; sleep 1.3'`, port)
	code, out, errs := runCLI(t, "-c", traffic, "dropwatch")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\n`).MatchString(out) {
		t.Errorf("no interval time line:\n%s", out)
	}
	if !strings.Contains(out, "\n@reason[NO_SOCKET]: 4\n") {
		t.Errorf("no @reason[NO_SOCKET]: 4:\n%s", out)
	}
	if !regexp.MustCompile(`\n@location\[__udp4_lib_rcv\+0x[0-9a-f]+\]: 4\n`).MatchString(out) {
		t.Errorf("no @location[__udp4_lib_rcv+0x...]: 4:\n%s", out)
	}
}

// TestPktpath sends 2 marked datagrams through veth to a closed port in
// another namespace: pktpath prints each one's path, from its first
// transmit on v1 to its drop on v2, although the namespace crossing clears
// the mark (track() follows it).
func TestPktpath(t *testing.T) {
	ns1, _, _ := vethPair(t, 4)
	const port = 4545
	code, out, errs := runCLI(t, "-c", "ip netns exec "+ns1+" "+sendCommand(fmt.Sprintf("10.200.4.2:%d", port), 2, 10, 0xdeadbeef), "pktpath", "0xdeadbeef")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// A path is the lines of one skb up to its drop. Lines of other skbs
	// may come between: an original consumed once a copy goes on.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var paths [][]string
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) < 11 {
			t.Fatalf("line %q", l)
		}
		if !strings.Contains(l, " saddr=10.200.4.1 daddr=10.200.4.2 l4proto=udp") || !strings.HasSuffix(l, fmt.Sprintf(" dport=%d", port)) {
			t.Errorf("line %q lacks the packet's addresses and ports", l)
		}
		if f[3] != "kfree_skb" {
			continue
		}
		var p []string
		for j := i; j >= 0; j-- {
			g := strings.Fields(lines[j])
			if j < i && g[3] == "kfree_skb" {
				break
			}
			if g[2] == f[2] {
				p = append([]string{g[3] + " " + g[5]}, p...)
			} else if g[3] != "consume_skb" {
				t.Errorf("line %q: another skb within a path", lines[j])
			}
		}
		paths = append(paths, p)
	}
	if len(paths) != 2 {
		t.Fatalf("want 2 paths ending in kfree_skb:\n%s", out)
	}
	for _, p := range paths {
		if p[0] != "net_dev_queue dev=v1" || p[len(p)-1] != "kfree_skb dev=v2" || !slicesContain(p, "netif_receive_skb dev=v2") {
			t.Errorf("path %v: want net_dev_queue on v1 ... netif_receive_skb on v2 ... kfree_skb on v2", p)
		}
	}
}

func slicesContain(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestTcpretrans connects over veth to a peer that then stops answering
// (an nftables rule drops its input): tcpretrans prints as many lines as
// the kernel counted retransmissions, and -c counts them for the flow.
func TestTcpretrans(t *testing.T) {
	if _, err := exec.LookPath("nft"); err != nil {
		t.Fatalf("the tcpretrans test needs nft (apt-get install nftables): %v", err)
	}
	for i, mode := range []string{"lines", "-c"} {
		t.Run(mode, func(t *testing.T) { tcpretrans(t, 5+i, mode) })
	}
}

// tcpretrans runs one mode of TestTcpretrans on namespaces of its own.
func tcpretrans(t *testing.T, n int, mode string) {
	ns1, ns2, _ := vethPair(t, n)
	// Orphaned sockets give up at once, so that none goes on retransmitting
	// into later tests once the namespaces are deleted.
	for _, ns := range []string{ns1, ns2} {
		if out, err := exec.Command("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.tcp_orphan_retries=1").CombinedOutput(); err != nil {
			t.Fatalf("sysctl: %v: %s", err, out)
		}
	}
	port := 4646
	peer := fmt.Sprintf("10.200.%d.2:%d", n, port)
	countFile := filepath.Join(t.TempDir(), "retrans")
	// The client holds its unanswered segment 1 s: the RTO doubles from
	// 200 ms, so retransmissions come near 0.2, 0.6 and 1.4 s, and the
	// count is read far from either side of one.
	traffic := fmt.Sprintf("ip netns exec %s env SKBTRACE_SERVE=%s %s & sleep 0.3; ip netns exec %s env SKBTRACE_STALL=%s,1000,%s %s; kill $!",
		ns2, peer, os.Args[0], ns1, peer, countFile, os.Args[0])
	args := []string{"-c", traffic, "tcpretrans"}
	if mode == "-c" {
		args = append(args, "-c")
	}
	code, out, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(countFile)
	if err != nil {
		t.Fatalf("the client did not finish: %v; stderr %s", err, errs)
	}
	var want int
	var localAddr string
	fmt.Sscan(string(b), &want, &localAddr)
	if want < 1 {
		t.Fatalf("the kernel counted %d retransmissions; the peer did not stop answering", want)
	}
	// Only this flow counts: other connections may retransmit meanwhile,
	// even from an earlier run's namespace of the same name and addresses.
	local := regexp.QuoteMeta(localAddr)
	if mode == "-c" {
		re := regexp.MustCompile(`(?m)^@retrans\[` + local + `, ` + regexp.QuoteMeta(peer) + `\]: (\d+)$`)
		m := re.FindStringSubmatch(out)
		if m == nil || m[1] != strconv.Itoa(want) {
			t.Errorf("output %q; want @retrans[local, %s]: %d", out, peer, want)
		}
		return
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "TIME     PID     LADDR:LPORT") {
		t.Errorf("header %q", lines[0])
	}
	re := regexp.MustCompile(`^\d\d:\d\d:\d\d \d+ +` + local + ` +> ` + regexp.QuoteMeta(peer) + ` +ESTABLISHED$`)
	got := 0
	for _, l := range lines[1:] {
		if strings.Contains(l, localAddr+" ") {
			got++
			if !re.MatchString(l) {
				t.Errorf("line %q", l)
			}
		}
	}
	if got != want {
		t.Errorf("%d lines for the flow, want %d (the kernel's count):\n%s", got, want, out)
	}
}

// TestToolsJSON runs each tool with -f json: every line it prints is one
// JSON object.
func TestToolsJSON(t *testing.T) {
	udp, tcp := closedUDPPort(t), closedTCPPort(t)
	for _, tc := range []struct {
		tool  []string
		cmd   string
		lines int // at least
	}{
		{[]string{"tcpdrop"}, connectClosed(tcp, 1, 1), 3},
		{[]string{"tcpreset"}, connectClosed(tcp, 1, 0), 3},
		{[]string{"tcpretrans"}, "true", 1},
		{[]string{"dropwatch"}, fmt.Sprintf(`bash -c 'printf x > /dev/udp/127.0.0.1/%d; sleep 1.2'`, udp), 3},
		{[]string{"pktpath", "0xdeadbeef"}, sendCommand(fmt.Sprintf("127.0.0.1:%d", udp), 1, 5, 0xdeadbeef), 2},
	} {
		code, out, errs := runCLI(t, append([]string{"-f", "json", "-c", tc.cmd}, tc.tool...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.tool[0], code, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) < tc.lines {
			t.Errorf("%s: %d lines, want at least %d:\n%s", tc.tool[0], len(lines), tc.lines, out)
		}
		for _, l := range lines {
			var v map[string]any
			if err := json.Unmarshal([]byte(l), &v); err != nil || v["type"] == nil {
				t.Errorf("%s: %q is not a JSON object with a type: %v", tc.tool[0], l, err)
			}
		}
	}
}
