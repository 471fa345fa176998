package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// vethPair creates two network namespaces joined by a veth pair: v1 in the
// first with 10.200.N.1 and fd00:200:N::1, v2 in the second with .2 and ::2.
// It returns the namespaces' names and the second's inode number; they are
// deleted when the test ends.
func vethPair(t *testing.T, n int) (ns1, ns2 string, inum2 uint64) {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatalf("the veth tests need iproute2's ip: %v", err)
	}
	ns1, ns2 = fmt.Sprintf("skbt%da", n), fmt.Sprintf("skbt%db", n)
	sh := func(cmd string) {
		t.Helper()
		if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", cmd, err, out)
		}
	}
	exec.Command("ip", "netns", "del", ns1).Run()
	exec.Command("ip", "netns", "del", ns2).Run()
	t.Cleanup(func() {
		exec.Command("ip", "netns", "del", ns1).Run()
		exec.Command("ip", "netns", "del", ns2).Run()
	})
	sh("ip netns add " + ns1)
	sh("ip netns add " + ns2)
	sh(fmt.Sprintf("ip -n %s link add v1 type veth peer name v2 netns %s", ns1, ns2))
	for i, ns := range []string{ns1, ns2} {
		dev := fmt.Sprintf("v%d", i+1)
		sh(fmt.Sprintf("ip -n %s addr add 10.200.%d.%d/24 dev %s", ns, n, i+1, dev))
		sh(fmt.Sprintf("ip -n %s addr add fd00:200:%d::%d/64 dev %s nodad", ns, n, i+1, dev))
		sh(fmt.Sprintf("ip -n %s link set %s up", ns, dev))
		sh(fmt.Sprintf("ip -n %s link set lo up", ns))
	}
	// The carrier comes up a moment after the links: wait for it, bounded.
	for i, ns := range []string{ns1, ns2} {
		deadline := time.Now().Add(5 * time.Second)
		for {
			out, _ := exec.Command("ip", "-n", ns, "link", "show", fmt.Sprintf("v%d", i+1)).Output()
			if strings.Contains(string(out), "LOWER_UP") && !strings.Contains(string(out), "NO-CARRIER") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("v%d in %s has no carrier after 5s: %s", i+1, ns, out)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	out, err := exec.Command("ip", "netns", "exec", ns2, "stat", "-L", "-c", "%i", "/proc/self/ns/net").Output()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Sscan(string(out), &inum2)
	return ns1, ns2, inum2
}

// TestVethEndToEnd sends marked datagrams from one namespace to a closed
// port in another, over veth, in IPv4 and IPv6, and checks what skbtrace
// counted where they left and where they were dropped: counts equal to the
// packets sent; device, addresses, ports, length, mark and the receiving
// namespace equal to what was sent.
func TestVethEndToEnd(t *testing.T) {
	ns1, ns2, inum := vethPair(t, 1)
	const sent, payload, port = 5, 100, 4242
	for _, v := range []struct {
		src, dst string
		hdr      int // IP header bytes
	}{
		{"10.200.1.1", "10.200.1.2", 20},
		{"fd00:200:1::1", "fd00:200:1::2", 40},
	} {
		dst := fmt.Sprintf("%s:%d", v.dst, port)
		if strings.Contains(v.dst, ":") {
			dst = fmt.Sprintf("[%s]:%d", v.dst, port)
		}
		script := fmt.Sprintf(`tracepoint:net:net_dev_start_xmit /mark == 0xdeadbeef && dport == %d/ { @tx[dev, saddr, daddr, dport, len, mark] = count() }
tracepoint:skb:kfree_skb /dport == %d/ { @drop[dev, saddr, sport != 0, daddr, dport, netns, reason] = count() }`, port, port)
		code, out, errs := runCLI(t, "-e", script, "-c", "ip netns exec "+ns1+" "+sendCommand(dst, sent, payload, 0xdeadbeef))
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		// At xmit the skb holds the Ethernet header too.
		// The key's netns is followed by the ip netns name it has.
		want := fmt.Sprintf("@tx[v1, %s, %s, %d, %d, 0xdeadbeef]: %d\n\n@drop[v2, %s, true, %s, %d, %d (netns:%s), NO_SOCKET]: %d\n",
			v.src, v.dst, port, 14+v.hdr+8+payload, sent, v.src, v.dst, port, inum, ns2, sent)
		if out != want {
			t.Errorf("%s: output:\n%s\nwant:\n%s", v.dst, out, want)
		}
	}
}

// TestVethJSON checks -f json on veth traffic: each event and map is one
// JSON object a line, with the values sent.
func TestVethJSON(t *testing.T) {
	ns1, _, _ := vethPair(t, 2)
	const sent, port = 3, 4343
	script := fmt.Sprintf(`tracepoint:skb:kfree_skb /dport == %d/ { print(dev, saddr, dport, len); @[daddr] = count() }`, port)
	code, out, errs := runCLI(t, "-f", "json", "-e", script, "-c", "ip netns exec "+ns1+" "+sendCommand(fmt.Sprintf("10.200.2.2:%d", port), sent, 10, 0))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != sent+1 {
		t.Fatalf("%d lines, want %d events and a map:\n%s", len(lines), sent, out)
	}
	for _, l := range lines[:sent] {
		var ev struct {
			Type string
			Func string
			Data map[string]any
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if ev.Type != "event" || ev.Func != "kfree_skb" || ev.Data["dev"] != "v2" || ev.Data["saddr"] != "10.200.2.1" || ev.Data["dport"] != float64(port) || ev.Data["len"] != float64(18) {
			t.Errorf("event %s", l)
		}
	}
	var m struct {
		Type string
		Data map[string]map[string]float64
	}
	if err := json.Unmarshal([]byte(lines[sent]), &m); err != nil || m.Type != "map" || m.Data["@"]["10.200.2.2"] != sent {
		t.Errorf("map line %s (%v)", lines[sent], err)
	}
}
