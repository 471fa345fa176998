package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/internal/pcaptest"
)

// tunnelNet is two namespaces joined by a veth pair (u1, u2: the
// underlay, 10.201.20.1 and .2) with a VXLAN device over it in each (vx42:
// VNI 42, port 4789, 192.168.42.1 and .2) and, where the kernel has
// geneve, a Geneve device (gn43: VNI 43, 192.168.43.1 and .2). IPv6 is
// off and every neighbor is static, so that the underlay carries only the
// test's traffic.
type tunnelNet struct {
	ns1, ns2 string
	geneve   bool // a geneve device: else Geneve is sent from a UDP socket
}

func newTunnelNet(t *testing.T) *tunnelNet {
	t.Helper()
	tn := &tunnelNet{ns1: "skbt20a", ns2: "skbt20b"}
	sh := func(cmd string) {
		t.Helper()
		if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", cmd, err, out)
		}
	}
	mac := func(ns, dev string) string {
		t.Helper()
		out, err := exec.Command("ip", "netns", "exec", ns, "cat", "/sys/class/net/"+dev+"/address").Output()
		if err != nil {
			t.Fatalf("the address of %s in %s: %v", dev, ns, err)
		}
		return strings.TrimSpace(string(out))
	}
	for _, ns := range []string{tn.ns1, tn.ns2} {
		exec.Command("ip", "netns", "del", ns).Run()
	}
	t.Cleanup(func() {
		exec.Command("ip", "netns", "del", tn.ns1).Run()
		exec.Command("ip", "netns", "del", tn.ns2).Run()
	})
	for _, ns := range []string{tn.ns1, tn.ns2} {
		sh("ip netns add " + ns)
		sh("ip netns exec " + ns + " sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 net.ipv4.icmp_ratelimit=0")
	}
	sh(fmt.Sprintf("ip -n %s link add u1 type veth peer name u2 netns %s", tn.ns1, tn.ns2))
	// A geneve device where the kernel has them (CONFIG_GENEVE).
	tn.geneve = exec.Command("ip", "-n", tn.ns1, "link", "add", "gn43", "type", "geneve", "id", "43", "remote", "10.201.20.2").Run() == nil
	for i, ns := range []string{tn.ns1, tn.ns2} {
		me, peer := i+1, 2-i
		sh(fmt.Sprintf("ip -n %s addr add 10.201.20.%d/24 dev u%d", ns, me, me))
		sh(fmt.Sprintf("ip -n %s link set u%d up", ns, me))
		sh(fmt.Sprintf("ip -n %s link set lo up", ns))
		sh(fmt.Sprintf("ip -n %s link add vx42 type vxlan id 42 dstport 4789 local 10.201.20.%d remote 10.201.20.%d", ns, me, peer))
		sh(fmt.Sprintf("ip -n %s addr add 192.168.42.%d/24 dev vx42", ns, me))
		sh(fmt.Sprintf("ip -n %s link set vx42 up", ns))
		if tn.geneve {
			if i == 1 {
				sh(fmt.Sprintf("ip -n %s link add gn43 type geneve id 43 remote 10.201.20.%d", ns, peer))
			}
			sh(fmt.Sprintf("ip -n %s addr add 192.168.43.%d/24 dev gn43", ns, me))
			sh(fmt.Sprintf("ip -n %s link set gn43 up", ns))
		}
	}
	for i, ns := range []string{tn.ns1, tn.ns2} {
		me, peer := i+1, 2-i
		peerNS := []string{tn.ns1, tn.ns2}[peer-1]
		sh(fmt.Sprintf("ip -n %s neigh replace 10.201.20.%d lladdr %s dev u%d nud permanent", ns, peer, mac(peerNS, fmt.Sprintf("u%d", peer)), me))
		sh(fmt.Sprintf("ip -n %s neigh replace 192.168.42.%d lladdr %s dev vx42 nud permanent", ns, peer, mac(peerNS, "vx42")))
		if tn.geneve {
			sh(fmt.Sprintf("ip -n %s neigh replace 192.168.43.%d lladdr %s dev gn43 nud permanent", ns, peer, mac(peerNS, "gn43")))
		}
	}
	// The carrier comes up a moment after the links: wait for it, bounded.
	deadline := time.Now().Add(5 * time.Second)
	for _, c := range [][2]string{{tn.ns1, "u1"}, {tn.ns2, "u2"}} {
		for {
			out, _ := exec.Command("ip", "-n", c[0], "link", "show", c[1]).Output()
			if strings.Contains(string(out), "LOWER_UP") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s in %s has no carrier after 5s: %s", c[1], c[0], out)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return tn
}

// traffic is the -c command of the test's traffic, in the order its
// packets cross the underlay from the first namespace to the second: in
// VXLAN, the second namespace's datagrams to a closed port of the first
// (two ICMP port unreachable back) and its SYN to a closed port (a RST
// back), then the first's datagrams to port 9 (3) and 53 (2) and a SYN
// to port 80; in Geneve the same through the geneve device, or
// pcaptest.GeneveDatagrams from a UDP socket.
func (tn *tunnelNet) traffic() string {
	in := func(ns, cmd string) string { return "ip netns exec " + ns + " " + cmd }
	var cmds []string
	for _, n := range []int{42, 43} {
		if n == 43 && !tn.geneve {
			cmds = append(cmds, in(tn.ns1, geneveCommand("10.201.20.2:6081")))
			continue
		}
		first, second := fmt.Sprintf("192.168.%d.1", n), fmt.Sprintf("192.168.%d.2", n)
		cmds = append(cmds,
			in(tn.ns2, sendCommand(first+":7", 2, 5, 0)),
			in(tn.ns2, rawCommand(first, "tcp,81,1,0,512,0x02")),
			in(tn.ns1, sendCommand(second+":9", 3, 10, 0)),
			in(tn.ns1, sendCommand(second+":53", 2, 20, 0)),
			in(tn.ns1, rawCommand(second, "tcp,80,1,0,512,0x02")))
	}
	return "sh -c '" + strings.Join(cmds, " && ") + "'"
}

// geneveCommand is a shell command that sends pcaptest.GeneveDatagrams
// to addr from a UDP socket.
func geneveCommand(addr string) string {
	return fmt.Sprintf("env SKBTRACE_GENEVE=%s %s", addr, os.Args[0])
}

// sendGeneve implements geneveCommand.
func sendGeneve(addr string) error {
	dst, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		return err
	}
	// Unconnected: the port unreachable that answers a datagram does not
	// fail the next write.
	c, err := net.ListenPacket("udp4", ":0")
	if err != nil {
		return err
	}
	defer c.Close()
	for _, d := range pcaptest.GeneveDatagrams() {
		if _, err := c.WriteTo(d, dst); err != nil {
			return err
		}
	}
	return nil
}

// capture runs tcpdump on u2 in the second namespace, the packets it
// receives, into a file, until the returned function stops it.
func (tn *tunnelNet) capture(t *testing.T, file string) (stop func()) {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", tn.ns2, "tcpdump", "-i", "u2", "-Q", "in", "--immediate-mode", "-U", "-w", file)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("tcpdump: %v", err)
	}
	listening := make(chan bool, 1)
	var said bytes.Buffer
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			said.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "listening on") {
				listening <- true
			}
		}
		close(listening)
	}()
	select {
	case ok := <-listening:
		if !ok {
			cmd.Wait()
			t.Fatalf("tcpdump ended: %s", said.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("tcpdump did not start listening in 10s")
	}
	return func() {
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("tcpdump did not end in 10s after SIGINT")
		}
	}
}

// TestTunnelFilters runs VXLAN and Geneve traffic between two namespaces
// and checks, for each filter, that the frames skbtrace's --filter
// selected where u2 received them (written with -w) are exactly, byte for
// byte and in order, those tcpdump selects from its own capture of u2 on
// the same traffic: with the same filter for geneve; for vxlan, which
// bookworm's tcpdump lacks, with the geneve twin on the capture made
// Geneve (pcaptest.GeneveForVXLAN); and that they are the packets sent.
// tshark decodes the inner packets of skbtrace's file; --filter alone
// prints them as tcpdump does.
func TestTunnelFilters(t *testing.T) {
	tn := newTunnelNet(t)
	if !tn.geneve {
		t.Log("no geneve device here (CONFIG_GENEVE): Geneve is sent from a UDP socket")
	}
	// Per filter, the frames of the traffic it must select: VXLAN's by
	// the traffic's order (ICMP unreachable 2, RST 1, UDP to 9 3, to 53
	// 2, SYN 1), Geneve's likewise or, sent from a socket, by
	// pcaptest.GeneveDatagrams (UDP to 9, SYN, UDP to 53, ICMP echo).
	const icmp, rst, udp9, udp53, syn = "ICMP", "RST", "UDP/9", "UDP/53", "SYN"
	geneve := []string{icmp, icmp, rst, udp9, udp9, udp9, udp53, udp53, syn}
	if !tn.geneve {
		geneve = []string{udp9, syn, udp53, "ECHO"}
	}
	vxlan := []string{icmp, icmp, rst, udp9, udp9, udp9, udp53, udp53, syn}
	pick := func(from []string, kinds ...string) []string {
		var out []string
		for _, k := range from {
			if slices.Contains(kinds, k) {
				out = append(out, k)
			}
		}
		return out
	}
	cases := []struct {
		filter string
		want   []string
	}{
		{"vxlan", vxlan},
		{"vxlan 42 and udp port 9", pick(vxlan, udp9)},
		{"vxlan and icmp", pick(vxlan, icmp)},
		{"vxlan and tcp[tcpflags] & (tcp-syn|tcp-rst) != 0", pick(vxlan, rst, syn)},
		{"vxlan and src host 192.168.42.1 and not udp", pick(vxlan, icmp, rst, syn)},
		{"vxlan 43", nil},
		{"geneve", geneve},
		{"geneve 43 and udp port 9", pick(geneve, udp9)},
		{"geneve and tcp[tcpflags] & tcp-syn != 0", pick(geneve, syn)},
		{"geneve and not udp", pick(geneve, icmp, rst, syn, "ECHO")},
		{"udp dst port 6081 and not geneve 43", pick(geneve, "ECHO")},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.filter, func(t *testing.T) {
			all, file := filepath.Join(dir, "u2.pcap"), filepath.Join(dir, "skbtrace.pcapng")
			stop := tn.capture(t, all)
			code, _, errs := runCLI(t, "--filter", c.filter, "-e", `tracepoint:net:netif_receive_skb /dev == "u2"/ { capture() }`, "-w", file, "-c", tn.traffic())
			stop()
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			// A file of no frames has no interface, which libpcap refuses.
			var got, want [][]byte
			var err error
			if len(tsharkFields(t, file, nil, "frame.number")) > 0 {
				if got, err = pcaptest.TcpdumpFrames(file, ""); err != nil {
					t.Fatal(err)
				}
			}
			if strings.Contains(c.filter, "vxlan") {
				frames, err := pcaptest.TcpdumpFrames(all, "")
				if err != nil {
					t.Fatal(err)
				}
				twin := filepath.Join(dir, "u2-geneve.pcap")
				f, err := os.Create(twin)
				if err != nil {
					t.Fatal(err)
				}
				if err := pcaptest.WritePcap(f, pcaptest.GeneveForVXLAN(frames)); err != nil {
					t.Fatal(err)
				}
				f.Close()
				sel, err := pcaptest.TcpdumpSelects(twin, strings.ReplaceAll(c.filter, "vxlan", "geneve"))
				if err != nil {
					t.Fatal(err)
				}
				for _, i := range sel {
					want = append(want, frames[i])
				}
			} else if want, err = pcaptest.TcpdumpFrames(all, c.filter); err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, want, bytes.Equal) {
				t.Errorf("skbtrace selected %d frames, tcpdump %d, not the same:\n%s\ntcpdump:\n%s", len(got), len(want), describeFrames(t, file), describeFrames(t, all))
			}
			if kinds := frameKinds(t, file); !slices.Equal(kinds, c.want) {
				t.Errorf("selected %v, want %v", kinds, c.want)
			}
		})
	}

	t.Run("decode", func(t *testing.T) {
		// tshark finds the inner packets in skbtrace's frames.
		file := filepath.Join(dir, "inner.pcapng")
		code, _, errs := runCLI(t, "--filter", "vxlan 42 and udp dst port 9", "-e", `tracepoint:net:netif_receive_skb /dev == "u2"/ { capture() }`, "-w", file, "-c", tn.traffic())
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		rows := tsharkFields(t, file, nil, "vxlan.vni", "ip.src", "ip.dst", "udp.dstport", "frame.protocols")
		if len(rows) != 3 {
			t.Fatalf("tshark read %d frames, want 3: %v", len(rows), rows)
		}
		for _, r := range rows {
			want := []string{"42", "10.201.20.1,192.168.42.1", "10.201.20.2,192.168.42.2", "4789,9", "eth:ethertype:ip:udp:vxlan:eth:ethertype:ip:udp:data"}
			if !slices.Equal(r, want) {
				t.Errorf("tshark: %v, want %v", r, want)
			}
		}
		// --filter alone prints each hop with the inner packet after the
		// outer, as tcpdump does, and follows the packet (track()) after
		// its decapsulation on vx42, where the filter no longer matches.
		code, out, errs := runCLI(t, "--filter", "vxlan 42 and udp dst port 9", "-c", tn.traffic())
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		line := regexp.MustCompile(`^\S+ +\d+ 0x[0-9a-f]+ (\w+) +dev=(u[12]) netns=\d+(?: \(netns:\w+\))? mark=0x0 pkt=IP 10\.201\.20\.1\.\d+ > 10\.201\.20\.2\.4789: VXLAN, flags \[I\] \(0x08\), vni 42 IP 192\.168\.42\.1\.\d+ > 192\.168\.42\.2\.9: UDP, length 10$`)
		inner := regexp.MustCompile(`^\S+ +\d+ 0x[0-9a-f]+ (\w+) +dev=(vx42) netns=\d+(?: \(netns:\w+\))? mark=0x0 pkt=IP 192\.168\.42\.1\.\d+ > 192\.168\.42\.2\.9: UDP, length 10$`)
		hops := map[string]int{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			m := line.FindStringSubmatch(l)
			if m == nil {
				m = inner.FindStringSubmatch(l)
			}
			if m == nil {
				t.Errorf("--filter printed %q", l)
				continue
			}
			hops[m[1]+" "+m[2]]++
		}
		for _, h := range []string{"net_dev_queue u1", "net_dev_start_xmit u1", "netif_receive_skb u2", "netif_receive_skb vx42"} {
			if hops[h] != 3 {
				t.Errorf("%d %s lines, want 3: %v", hops[h], h, hops)
			}
		}
	})
}

// frameKinds names the packets of a file by what is inside their tunnel:
// ICMP (port unreachable), ECHO (request), RST, SYN, UDP/PORT.
func frameKinds(t *testing.T, file string) []string {
	t.Helper()
	var kinds []string
	for _, r := range tsharkFields(t, file, nil, "icmp.type", "tcp.flags", "udp.dstport") {
		ports := strings.Split(r[2], ",")
		switch {
		case r[0] == "3":
			kinds = append(kinds, "ICMP")
		case r[0] == "8":
			kinds = append(kinds, "ECHO")
		case r[1] == "0x0014":
			kinds = append(kinds, "RST")
		case r[1] == "0x0002":
			kinds = append(kinds, "SYN")
		case len(ports) == 2:
			kinds = append(kinds, "UDP/"+ports[1])
		default:
			kinds = append(kinds, fmt.Sprint(r))
		}
	}
	return kinds
}

// describeFrames is tcpdump's reading of a file, for a failure's message.
func describeFrames(t *testing.T, file string) string {
	out, err := exec.Command("tcpdump", "-r", file, "-nn", "-t").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("tcpdump -r %s: %v: %s", file, err, out)
	}
	return string(out)
}
