package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// vlanPair tags what v1 sends with VLAN 10 and untags it at v2: tc
// programs (tcx) that push and pop the tag as hardware-accelerated VLAN
// devices do, the kernel keeping it out of band in skb->vlan_all on v1's
// transmit and v2's receive. (A vlan subinterface does the same; not every
// kernel has 8021q, and this one's tests must run on this machine.)
func vlanPair(t *testing.T, n int) (ns1, ns2 string) {
	ns1, ns2, _ = vethPair(t, n)
	push := asm.Instructions{
		asm.Mov.Imm(asm.R2, 0x0081), // htons(ETH_P_8021Q)
		asm.Mov.Imm(asm.R3, 10),
		asm.FnSkbVlanPush.Call(),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	}
	pop := asm.Instructions{asm.FnSkbVlanPop.Call(), asm.Mov.Imm(asm.R0, 0), asm.Return()}
	tcAttach(t, ns1, "v1", ebpf.AttachTCXEgress, push)
	tcAttach(t, ns2, "v2", ebpf.AttachTCXIngress, pop)
	return ns1, ns2
}

// tcAttach attaches a tc program to dev in the namespace ns for the
// test's duration. The attach runs on a thread of its own that enters ns
// and goes back; if it cannot go back, the thread stays locked and ends
// with its goroutine. (A thread that ends locked may be the process's main
// one, which Go keeps, wedged: left in ns, it would be what
// /proc/self/ns/net says for the rest of the test binary.)
func tcAttach(t *testing.T, ns, dev string, where ebpf.AttachType, insns asm.Instructions) {
	t.Helper()
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.SchedCLS, License: "GPL", Instructions: insns})
	if err != nil {
		t.Fatalf("tc program: %v", err)
	}
	defer prog.Close()
	type result struct {
		l   link.Link
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			done <- result{err: err}
			return
		}
		defer orig.Close()
		target, err := os.Open("/var/run/netns/" + ns)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- result{err: fmt.Errorf("setns %s: %w", ns, err)}
			return
		}
		var r result
		iface, err := net.InterfaceByName(dev)
		if err == nil {
			r.l, err = link.AttachTCX(link.TCXOptions{Interface: iface.Index, Program: prog, Attach: where})
		}
		if err != nil {
			r.err = fmt.Errorf("tcx on %s in %s: %w", dev, ns, err)
		}
		if unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- r
	}()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { r.l.Close() })
}

// TestVlanOutOfBand sends datagrams tagged out of band between the
// veths. `vlan 10` matches the hops that carry the tag as tcpdump on the
// wire would (v1's transmit, v2's receive), `vlan 11` none, and
// `... and not vlan` only the others; -w writes the tag after the MAC
// addresses, so that tshark and tcpdump read VLAN 10 with the IP and UDP
// headers after it; the vlan field says 10. A bulk TCP transfer's paged
// skbs are written whole, tag and fragments, as sent.
func TestVlanOutOfBand(t *testing.T) {
	ns1, ns2 := vlanPair(t, 14)
	const sent, size = 2, 20
	send := "ip netns exec " + ns1 + " " + sendCommand("10.200.14.2:4761", sent, size, 0)
	file := t.TempDir() + "/vlan.pcapng"
	code, _, errs := runCLI(t, "--filter", "vlan 10 and udp dst port 4761", "-w", file, "-c", send)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows := tsharkFields(t, file, nil, "frame.interface_name", "vlan.id", "ip.dst", "udp.dstport", "udp.payload", "frame.len", "frame.cap_len", "frame.comment")
	hops, tagged := map[string]int{}, 0
	for _, r := range rows {
		m := commentRE.FindStringSubmatch(r[7])
		if m == nil {
			t.Fatalf("comment %q", r[7])
		}
		hops[r[0]+" "+m[1]]++
		// --filter follows the packet (track()) after v2 takes its tag
		// off, where the filter no longer matches: those frames have none.
		vid, n := "10", strconv.Itoa(14+4+20+8+size)
		if m[1] == "icmp_send" || m[1] == "kfree_skb" {
			vid, n = "", strconv.Itoa(14+20+8+size)
		} else {
			tagged++
		}
		if want := []string{vid, "10.200.14.2", "4761", strings.Repeat("00", size), n, n}; strings.Join(r[1:7], " ") != strings.Join(want, " ") {
			t.Errorf("frame on %s: %v, want %v (%s)", r[0], r[1:7], want, r[7])
		}
	}
	if hops["v1 net_dev_start_xmit"] != sent || hops["v2 netif_receive_skb"] != sent || hops["v2 kfree_skb"] != sent {
		t.Errorf("vlan 10 frames by device and hop: %v", hops)
	}
	out, err := exec.Command("tcpdump", "-r", file, "-nn", "vlan 10 and udp dst port 4761").Output()
	if n := strings.Count(string(out), "\n"); err != nil || n != tagged {
		t.Errorf("tcpdump -r 'vlan 10 and ...' read %d frames of %d tagged (%v):\n%s", n, tagged, err, out)
	}

	code, _, errs = runCLI(t, "--filter", "udp dst port 4761 and not vlan", "-w", file, "-c", send)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	hops = map[string]int{}
	for _, r := range tsharkFields(t, file, nil, "frame.comment", "vlan.id") {
		hops[strings.Fields(r[0])[0]+"/"+r[1]]++
	}
	if hops["net_dev_start_xmit/"] != 0 || hops["netif_receive_skb/"] != 0 || hops["kfree_skb/"] != sent {
		t.Errorf("not vlan frames by hop/VLAN: %v", hops)
	}

	code, printed, errs := runCLI(t, "-e", `tracepoint:net:net_dev_start_xmit /pcap("vlan 10 and udp dst port 4761")/ { printf("%s %d\n", dev, vlan) }
tracepoint:net:net_dev_start_xmit /pcap("vlan 11 and udp dst port 4761")/ { printf("vlan 11 matched\n") }`, "-c", send)
	if want := strings.Repeat("v1 10\n", sent); code != 0 || printed != want {
		t.Errorf("exit %d, printed:\n%s\nwant:\n%s%s", code, printed, want, errs)
	}

	checkBulk(t, ns1, ns2, "10.200.14.2:4800", "0", "vlan 10 and tcp dst port 4800", true)
}
