package main

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// whydropBin runs the built skbtrace's whydrop with args while cmd runs,
// bounded to 90 s, and returns its stdout and stderr.
func whydropBin(t *testing.T, cmd string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, builtSkbtrace(t), append(append(args, "-c", cmd), "whydrop")...)
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		t.Fatalf("whydrop: %v\n%s", err, errb.String())
	}
	return out.String(), errb.String()
}

// shIn runs shell commands in a namespace, failing the test on an error.
func shIn(t *testing.T, ns string, cmds ...string) {
	t.Helper()
	for _, c := range cmds {
		if out, err := exec.Command("ip", "netns", "exec", ns, "sh", "-c", c).CombinedOutput(); err != nil {
			t.Fatalf("%s in %s: %v: %s", c, ns, err, out)
		}
	}
}

// nftRuleLine is the rule with this comment in a chain, as `nft -a list
// chain` prints it (trimmed), and its handle.
func nftRuleLine(t *testing.T, ns, table, chain, comment string) (string, int) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "nft", "-a", "list", "chain", strings.Fields(table)[0], strings.Fields(table)[1], chain).Output()
	if err != nil {
		t.Fatalf("nft list chain %s %s: %v", table, chain, err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, `comment "`+comment+`"`) {
			l = strings.TrimSpace(l)
			var h int
			fmt.Sscan(l[strings.LastIndex(l, "# handle ")+len("# handle "):], &h)
			return l, h
		}
	}
	t.Fatalf("no rule with comment %q in %s %s:\n%s", comment, table, chain, out)
	return "", 0
}

// needTools skips nothing: the rule tests need these, and say so.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("this test needs %s (apt-get install nftables iptables): %v", tool, err)
		}
	}
}

// TestWhydropNamesRules drops datagrams in one namespace by nftables
// rules in three tables on the input hook (one in a chain jumped to, one
// a chain's policy), by iptables-nft and iptables-legacy rules with
// comments, by a kube-proxy-like set of chains, and after a DNAT; whydrop
// --nftrace names each rule exactly as nft -a list ruleset and iptables
// -S print it, the service behind kube-proxy's comments, the NAT's reply
// tuple; its table is gone after it.
func TestWhydropNamesRules(t *testing.T) {
	needTools(t, "nft", "iptables-nft", "iptables-legacy")
	ns1, ns2, _ := vethPair(t, 32)
	nftIn(t, ns2, `table inet rt_a {
	chain in {
		type filter hook input priority -10; policy accept;
		udp dport 7100 jump deny_a
	}
	chain deny_a {
		udp dport 7100 counter drop comment "a denies 7100"
	}
}
table ip rt_b {
	chain in {
		type filter hook input priority 10; policy accept;
		udp dport 7101 counter drop comment "b denies 7101"
		udp dport 7131 counter drop comment "after dnat"
	}
}
table inet rt_c {
	chain in {
		type filter hook input priority 20; policy drop;
		udp dport != 7103 accept
	}
}
table ip rt_nat {
	chain pre {
		type nat hook prerouting priority -100; policy accept;
		udp dport 7130 dnat to 10.200.32.2:7131
	}
}`)
	shIn(t, ns2,
		`iptables-nft -A INPUT -p udp --dport 7110 -m comment --comment "nft-compat denies 7110" -j DROP`,
		`iptables-nft -N KUBE-SERVICES && iptables-nft -N KUBE-SVC-WEB && iptables-nft -N KUBE-SEP-WEB1`,
		`iptables-nft -A INPUT -j KUBE-SERVICES`,
		`iptables-nft -A KUBE-SERVICES -d 10.200.32.2/32 -p udp --dport 7120 -m comment --comment "default/web:dns cluster IP" -j KUBE-SVC-WEB`,
		`iptables-nft -A KUBE-SERVICES -p udp --dport 7121 -m comment --comment "default/gone:http has no endpoints" -j REJECT`,
		`iptables-nft -A KUBE-SVC-WEB -m comment --comment "default/web:dns -> 10.244.0.5:53" -j KUBE-SEP-WEB1`,
		`iptables-nft -A KUBE-SEP-WEB1 -p udp -m comment --comment "default/web:dns" -j DROP`,
		`iptables-legacy -A INPUT -p udp --dport 7199 -j ACCEPT`,
		`iptables-legacy -A INPUT -p udp --dport 7111 -m comment --comment "legacy denies 7111" -j DROP`,
	)
	ports := []int{7100, 7101, 7103, 7110, 7111, 7120, 7121, 7130}
	var send []string
	for _, p := range ports {
		send = append(send, "ip netns exec "+ns1+" "+sendCommand(fmt.Sprintf("10.200.32.2:%d", p), 1, 10, 0))
	}
	// --netns: the trace table goes into the test's namespace alone,
	// never the host's ruleset.
	out, errs := whydropBin(t, strings.Join(send, "; "), "--nftrace", "--netns", ns2)
	if !strings.Contains(errs, "skbtrace: --nftrace: table inet skbtrace_nftrace_") {
		t.Errorf("stderr does not say where --nftrace put its table:\n%s", errs)
	}
	block := func(port int) string {
		t.Helper()
		return dropBlock(t, out, fmt.Sprintf(`udp +10\.200\.32\.1:\d+ > 10\.200\.32\.2:%d dev v2 `, port))
	}
	nftLine := func(table, chain, comment string) string {
		l, h := nftRuleLine(t, ns2, table, chain, comment)
		return fmt.Sprintf("  nft    table %s, chain %s, handle %d: %s\n", table, chain, h, l)
	}
	// iptables-nft's rules: nft prints them without their comments
	// (xt matches), iptables-nft -S with them; whydrop prints both.
	iptLine := func(chain string, number int, comment string) string {
		out, err := exec.Command("ip", "netns", "exec", ns2, "iptables-nft", "-S", chain).Output()
		if err != nil {
			t.Fatal(err)
		}
		var rules []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "-A "+chain+" ") {
				rules = append(rules, l)
			}
		}
		if number > len(rules) || !strings.Contains(rules[number-1], comment) {
			t.Fatalf("iptables-nft -S %s has no rule %d with %q:\n%s", chain, number, comment, out)
		}
		return fmt.Sprintf("  ipt    table filter, chain %s, rule %d (iptables-nft): %s\n", chain, number, rules[number-1])
	}
	nftCompat := func(chain string, number int, comment string) string {
		return nftLineNth(t, ns2, "ip filter", chain, number) + iptLine(chain, number, comment)
	}
	legacy, err := exec.Command("ip", "netns", "exec", ns2, "iptables-legacy", "-S", "INPUT").Output()
	if err != nil {
		t.Fatal(err)
	}
	legacyRule := ""
	for _, l := range strings.Split(string(legacy), "\n") {
		if strings.Contains(l, "7111") {
			legacyRule = l
		}
	}
	for _, c := range []struct {
		port int
		want []string
	}{
		{7100, []string{nftLine("inet rt_a", "deny_a", "a denies 7100")}},
		{7101, []string{nftLine("ip rt_b", "in", "b denies 7101")}},
		{7103, []string{"  nft    table inet rt_c, chain in, its policy drop\n"}},
		{7110, []string{nftCompat("INPUT", 1, "nft-compat denies 7110")}},
		{7111, []string{"  ipt    table filter, chain INPUT, rule 2 (iptables-legacy): " + legacyRule + "\n"}},
		{7120, []string{nftCompat("KUBE-SEP-WEB1", 1, "default/web:dns"), "  object service default/web:dns (kube-proxy)\n"}},
		{7121, []string{nftCompat("KUBE-SERVICES", 2, "default/gone:http has no endpoints"), "  object service default/gone:http (kube-proxy)\n"}},
		{7131, []string{nftLine("ip rt_b", "in", "after dnat")}},
	} {
		b := block(c.port)
		for _, w := range c.want {
			if !strings.Contains(b, w) {
				t.Errorf("port %d: block lacks %q:\n%s", c.port, w, b)
			}
		}
	}
	// The DNATed datagram: its block's first line has the address it
	// was dropped with (after the NAT), the ct line the original, the nat
	// line the reply.
	if b := block(7131); !regexp.MustCompile(`(?m)^  ct     new, mark 0x0, 10\.200\.32\.1:(\d+) > 10\.200\.32\.2:7130\n  nat    dnat, reply 10\.200\.32\.2:7131 > 10\.200\.32\.1:\d+, zone 0\n`).MatchString(b) {
		t.Errorf("the DNATed drop's block lacks its tuples:\n%s", b)
	}
	if tables, _ := exec.Command("ip", "netns", "exec", ns2, "nft", "list", "tables").Output(); strings.Contains(string(tables), "skbtrace_nftrace_") {
		t.Errorf("--nftrace's table is left in %s:\n%s", ns2, tables)
	}
}

// TestWhydropNftraceOptIn: without --nftrace the ruleset is left alone,
// an nftables drop's block says what naming its rule takes, and stderr
// says it once for several drops.
func TestWhydropNftraceOptIn(t *testing.T) {
	needTools(t, "nft")
	ns1, ns2, _ := vethPair(t, 33)
	nftIn(t, ns2, `table inet rt_d {
	chain in {
		type filter hook input priority 0; policy accept;
		udp dport 7140 counter drop comment "d denies 7140"
	}
}`)
	out, errs := whydropBin(t, "ip netns exec "+ns1+" "+sendCommand("10.200.33.2:7140", 3, 10, 0))
	b := dropBlock(t, out, `udp +10\.200\.33\.1:\d+ > 10\.200\.33\.2:7140 dev v2 `)
	if !strings.Contains(b, "  which  which nftables rule: run with --nftrace\n") {
		t.Errorf("block does not say what it takes:\n%s", b)
	}
	if n := strings.Count(errs, "needs --nftrace"); n != 1 {
		t.Errorf("stderr says what it takes %d times, want once:\n%s", n, errs)
	}
	if strings.Contains(errs, "--nftrace: table") {
		t.Errorf("a table was added without --nftrace:\n%s", errs)
	}
}

// TestNftraceTableGoneAfterSIGKILL: --nftrace's table is an owner table,
// which the kernel removes when skbtrace is killed (Linux 5.12 on); with
// --netns it is in that namespace alone.
func TestNftraceTableGoneAfterSIGKILL(t *testing.T) {
	needTools(t, "nft")
	_, ns2, _ := vethPair(t, 36)
	nftIn(t, ns2, `table inet rt_e {
	chain in {
		type filter hook input priority 0; policy accept;
	}
}`)
	cmd := exec.Command(builtSkbtrace(t), "--nftrace", "--netns", ns2, "--duration", "60s", "whydrop")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var seen strings.Builder
	buf := make([]byte, 4096)
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(seen.String(), "tracing") && time.Now().Before(deadline) {
		n, err := stderr.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if !strings.Contains(seen.String(), "owner table") {
		t.Skipf("this kernel has no owner tables: %s", seen.String())
	}
	mine := fmt.Sprintf("skbtrace_nftrace_%d", cmd.Process.Pid)
	tables := func() string {
		out, _ := exec.Command("ip", "netns", "exec", ns2, "nft", "list", "tables").Output()
		return string(out)
	}
	if !strings.Contains(tables(), mine) {
		t.Fatalf("no table %s while tracing:\n%s\n%s", mine, tables(), seen.String())
	}
	if host, _ := exec.Command("nft", "list", "tables").Output(); strings.Contains(string(host), mine) {
		t.Fatalf("--netns %s, yet table %s is in the host's ruleset:\n%s", ns2, mine, host)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	for end := time.Now().Add(5 * time.Second); strings.Contains(tables(), mine); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("table %s still there 5 s after SIGKILL:\n%s", mine, tables())
		}
	}
}

// nftLineNth is whydrop's nft line for the number-th rule of a chain, as
// nft -a list chain prints it.
func nftLineNth(t *testing.T, ns, table, chain string, number int) string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "nft", "-a", "list", "chain", strings.Fields(table)[0], strings.Fields(table)[1], chain).Output()
	if err != nil {
		t.Fatalf("nft list chain %s %s: %v", table, chain, err)
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		if !strings.Contains(l, "# handle ") || strings.HasPrefix(l, "chain ") || strings.HasPrefix(l, "table ") {
			continue
		}
		if n++; n == number {
			var h int
			fmt.Sscan(l[strings.LastIndex(l, "# handle ")+len("# handle "):], &h)
			return fmt.Sprintf("  nft    table %s, chain %s, handle %d: %s\n", table, chain, h, l)
		}
	}
	t.Fatalf("no rule %d in %s %s:\n%s", number, table, chain, out)
	return ""
}

// TestWhydropMLDNamesICMPv6: an MLD report (ICMPv6 behind a hop-by-hop
// header) dropped where no route takes it prints its protocol as icmpv6,
// as tcpdump names it, not 0.
func TestWhydropMLDNamesICMPv6(t *testing.T) {
	ns1, _, _ := vethPair(t, 37)
	// The link coming back up sends MLD reports to ff02::16.
	out, _ := whydropBin(t, "ip -n "+ns1+" link set v1 down; ip -n "+ns1+" link set v1 up; sleep 1.5")
	mld := regexp.MustCompile(`(?m)^\S+ (\S+) +\[[0-9a-f:]+\]:\d+ > \[ff02::16\]:\d+ dev v[12] `)
	m := mld.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		t.Fatalf("no drop of an MLD report to ff02::16:\n%s", out)
	}
	for _, s := range m {
		if s[1] != "icmpv6" {
			t.Errorf("an MLD report's protocol printed as %q, want icmpv6:\n%s", s[1], s[0])
		}
	}
}

// TestWhydropBlocksWhole: drops on two CPUs at once print whole blocks,
// never one's lines between another's: in text, every block is a header
// line and its where and why; in JSON, each drop is one printf object.
func TestWhydropBlocksWhole(t *testing.T) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Fatalf("this test needs taskset (util-linux): %v", err)
	}
	ns1, _, _ := vethPair(t, 38)
	send := func(cpu int) string {
		return fmt.Sprintf("taskset -c %d ip netns exec %s %s", cpu, ns1, sendCommand("10.200.38.2:7150", 300, 10, 0))
	}
	cmd := "(" + send(0) + ") & (" + send(1) + "); wait"
	out, _ := whydropBin(t, cmd, "-f", "json")
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(line, `"type": "printf"`) && !strings.Contains(line, `"type":"printf"`) {
			continue
		}
		if !strings.Contains(line, "7150") {
			continue
		}
		n++
		if !regexp.MustCompile(`"data": ?"\S+ udp +10\.200\.38\.1:\d+ (>|\\u003e) 10\.200\.38\.2:7150 [^"]*\\n  where  [^"]*\\n  why    [^"]*\\n[^"]*"`).MatchString(line) {
			t.Fatalf("a drop's object is not its whole block: %s", line)
		}
		if strings.Count(line, "10.200.38.2:7150 dev") != 1 {
			t.Fatalf("an object holds more than one drop: %s", line)
		}
	}
	if n < 600 {
		t.Errorf("%d drops printed, want 600", n)
	}
}
