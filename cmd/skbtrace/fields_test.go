package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// TestTCPHeaderFields sends a hand-made TCP segment to a closed loopback
// port and checks that seq, ack, win and tcpflags are what it carried.
func TestTCPHeaderFields(t *testing.T) {
	port := closedTCPPort(t)
	script := fmt.Sprintf(`tracepoint:skb:kfree_skb /l4proto == tcp && dport == %d/ { print(seq, ack, win, tcpflags) }`, port)
	code, out, errs := runCLI(t, "-e", script, "-c", rawCommand("127.0.0.1", fmt.Sprintf("tcp,%d,0x11223344,0x55667788,4321,0x10", port)))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if want := "seq=287454020 ack=1432778632 win=4321 tcpflags=ACK"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

// TestICMPFields sends an echo request with a chosen id and sequence over
// loopback, and a datagram to a closed port: the request, the kernel's
// reply and its port-unreachable error carry the types, codes, id and
// sequence sent.
func TestICMPFields(t *testing.T) {
	port := closedUDPPort(t)
	script := `tracepoint:net:net_dev_queue /l4proto == icmp/ { print(icmp_type, icmp_code, icmp_id, icmp_seq) }`
	traffic := fmt.Sprintf("bash -c '%s; printf x > /dev/udp/127.0.0.1/%d'", rawCommand("127.0.0.1", "icmp,0x1234,7"), port)
	code, out, errs := runCLI(t, "-e", script, "-c", traffic)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"icmp_type=8 icmp_code=0 icmp_id=4660 icmp_seq=7",
		"icmp_type=0 icmp_code=0 icmp_id=4660 icmp_seq=7",
		"icmp_type=3 icmp_code=3 icmp_id=0 icmp_seq=0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestVlanField tags what v1 sends over veth with VLAN 100 (a tc program
// calls bpf_skb_vlan_push: this kernel has no 8021q module) and checks the
// tag skbtrace reads at v1's transmit.
func TestVlanField(t *testing.T) {
	ns1, ns2, _ := vethPair(t, 7)
	pushVlan(t, ns1, "v1", 100)
	// The peer cannot read tagged frames, ARP's included: a fixed neighbour.
	mac, err := exec.Command("ip", "netns", "exec", ns2, "cat", "/sys/class/net/v2/address").Output()
	if err != nil {
		t.Fatal(err)
	}
	shell(t, fmt.Sprintf("ip -n %s neigh replace 10.200.7.2 lladdr %s dev v1 nud permanent", ns1, strings.TrimSpace(string(mac))))
	const port = 5555
	script := fmt.Sprintf(`tracepoint:net:net_dev_start_xmit /dev == "v1"/ { print(vlan, proto) }
tracepoint:net:net_dev_queue /dev == "v1" && dport == %d/ { print(vlan, dport) }`, port)
	code, out, errs := runCLI(t, "-e", script, "-c", "ip netns exec "+ns1+" "+sendCommand(fmt.Sprintf("10.200.7.2:%d", port), 1, 10, 0))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// The egress tc program runs before both tracepoints.
	for _, want := range []string{"vlan=100 dport=5555", "vlan=100 proto=ipv4"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// pushVlan attaches, at dev's egress in namespace ns, a tcx program that
// tags every packet with VLAN id vid.
func pushVlan(t *testing.T, ns, dev string, vid int32) {
	t.Helper()
	tcAttach(t, ns, dev, ebpf.AttachTCXEgress, asm.Instructions{
		asm.Mov.Imm(asm.R2, 0x0081), // htons(ETH_P_8021Q)
		asm.Mov.Imm(asm.R3, vid),
		asm.FnSkbVlanPush.Call(),
		asm.Mov.Imm(asm.R0, 0), // TCX_PASS
		asm.Return(),
	})
}

// TestGSOFields sends TCP data over veth: the GSO packets at v1's transmit
// have the MSS as gso_size (1448 on an MTU of 1500 with timestamps) and
// their payload divided by it as gso_segs.
func TestGSOFields(t *testing.T) {
	ns1, ns2, _ := vethPair(t, 8)
	const port, sent = 5556, 200000
	script := fmt.Sprintf(`tracepoint:net:net_dev_start_xmit /l4proto == tcp && dport == %d && len > 1000/ { print(dev, len, gso_size, gso_segs) }`, port)
	// The client retries until the sink listens, for at most 5 seconds.
	sh := filepath.Join(t.TempDir(), "traffic.sh")
	body := fmt.Sprintf("ip netns exec %s %s &\nfor i in $(seq 50); do ip netns exec %s bash -c 'head -c %d /dev/zero > /dev/tcp/10.200.8.2/%d' 2>/dev/null && break; sleep 0.1; done\nwait\n",
		ns2, sinkCommand(fmt.Sprintf("10.200.8.2:%d", port)), ns1, sent, port)
	if err := os.WriteFile(sh, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	traffic := "bash " + sh
	code, out, errs := runCLI(t, "-e", script, "-c", traffic)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	line := regexp.MustCompile(`dev=v1 len=(\d+) gso_size=(\d+) gso_segs=(\d+)`)
	gso := 0
	for _, m := range line.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[1])
		size, _ := strconv.Atoi(m[2])
		segs, _ := strconv.Atoi(m[3])
		if size == 0 {
			continue
		}
		gso++
		// Ethernet 14, IPv4 20, TCP 32 with timestamps.
		payload := n - 14 - 20 - 32
		if size != 1448 || segs != (payload+size-1)/size {
			t.Errorf("gso_size %d gso_segs %d for %d bytes of payload, want 1448 and %d", size, segs, payload, (payload+1447)/1448)
		}
	}
	if gso == 0 {
		t.Fatalf("no GSO packet on v1:\n%s", out)
	}
}

// shell runs a command, failing the test on error.
func shell(t *testing.T, cmd string) {
	t.Helper()
	if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", cmd, err, out)
	}
}
