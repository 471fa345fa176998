package codegen_test

import (
	"errors"
	"net"
	"sync"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang"
)

var (
	btfOnce sync.Once
	btfSpec *btf.Spec
	btfErr  error
)

func loadBTF() { btfSpec, btfErr = btf.LoadKernelSpec() }

func compile(t testing.TB, text string) *codegen.Output {
	t.Helper()
	btfOnce.Do(loadBTF)
	if btfErr != nil {
		t.Skipf("no kernel BTF: %v", btfErr)
	}
	script, err := lang.Parse(&lang.Source{Name: "test.st", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	info, err := check.Check(script, check.Options{BTF: btfSpec})
	if err != nil {
		t.Fatal(err)
	}
	out, err := codegen.Compile(script, info, codegen.Options{})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return out
}

// load puts every program of the script through the kernel's verifier.
func load(t *testing.T, out *codegen.Output) *ebpf.Collection {
	t.Helper()
	cs := &ebpf.CollectionSpec{Maps: out.Maps, Programs: map[string]*ebpf.ProgramSpec{}}
	for _, p := range out.Programs {
		cs.Programs[p.Name] = p.Prog
	}
	coll, err := ebpf.NewCollection(cs)
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			t.Fatalf("verifier rejected the program: %+v", ve)
		}
		t.Fatalf("load: %v", err)
	}
	t.Cleanup(coll.Close)
	return coll
}

// TestVerifierAcceptsScripts compiles scripts covering the constructs
// compiled so far and loads each program into the running kernel.
func TestVerifierAcceptsScripts(t *testing.T) {
	scripts := []string{
		`tracepoint:skb:kfree_skb { @[reason] = count() }`,
		`tracepoint:skb:kfree_skb /len > 10 && mark == 0/ { @bytes[ifindex] = sum(len) }`,
		`tracepoint:skb:kfree_skb { @t[pkt_type, netns, proto] = count() }`,
		`tracepoint:skb:kfree_skb { @x[skb->sk->__sk_common.skc_family, skb->dev->mtu] = count() }`,
		`tracepoint:skb:kfree_skb /reason == "NO_SOCKET" || !(len < 3)/ { $a = len * 2 + 1; $a += 3; @v[cpu, pid, tid] = $a }`,
		`tracepoint:skb:kfree_skb { @deep = ((((len + 1) * (len + 2)) - ((len + 3) * (len + 4))) ^ (((len + 5) << 1) | ((len + 6) >> 2))) + (len > 7 ? len & 8 : ~len) }`,
		`tracepoint:skb:kfree_skb { if (len > 100) { @big = count() } else if (len > 10) { @mid = count() } else { @small = count() } @n++; @m -= 2 }`,
		`tracepoint:net:netif_receive_skb { @[ifindex] = count() }`,
		`kprobe:tcp_v4_rcv { @[len, args.skb->protocol] = count() }`,
		`skb:* { @[func] = count() }`,
		`skb:ip_rcv*, skb:tcp_v4_rcv /proto == tcp && dport == 80/ { @calls[sport, tcpflags] = count() }`,
		`skb:* /l4proto == udp || l4proto == icmp/ { @[l4proto, dport, mark, hash] = sum(len) }`,
		`tracepoint:skb:kfree_skb /(tcpflags & SYN) != 0/ { @syn[dport] = count() }`,
		`tracepoint:skb:kfree_skb /saddr in 10.0.0.0/8 || daddr == ::1 || saddr != 192.168.1.1 || daddr in fe80::/10/ { @[dport] = count() }`,
		`tracepoint:skb:kfree_skb { printf("%s %d %s:%u -> %s:%u %s %s\n", reason, len, saddr, sport, daddr, dport, dev, comm); print(len, saddr, daddr, l4proto) }`,
		`skb:* /mark == 0xdeadbeef/ < print(len, dev) >`,
		`tracepoint:skb:kfree_skb { @h[ifindex] = hist(len); @l = lhist(len, -100, 1500, 100); @mn[cpu] = min(len); @mx = max(len); @a = avg(len); @s[l4proto, dport] = stats(len) }`,
		`BEGIN { printf("start\n") } interval:ms:100 { print(@n); clear(@n); zero(@m) } tracepoint:skb:kfree_skb { @n = count(); @m = sum(len); if (len > 1000) { exit() } } END { printf("end\n") }`,
	}
	for _, s := range scripts {
		t.Run(s, func(t *testing.T) {
			out := compile(t, s)
			coll := load(t, out)
			size := map[string]int{}
			for _, p := range out.Programs {
				size[p.Name] = len(p.Prog.Instructions)
			}
			for name, p := range coll.Programs {
				info, err := p.Info()
				if err != nil {
					t.Fatal(err)
				}
				if n, ok := info.VerifiedInstructions(); ok {
					t.Logf("%s: %d instructions, %d verified", name, size[name], n)
				}
			}
		})
	}
}

// dropsByKey sends `sent` UDP datagrams of `payload` bytes from a fresh
// socket to a closed port on loopback, with the script's program attached to
// skb:kfree_skb, and returns the per-CPU map summed by key, with both ports.
func dropsByKey(t *testing.T, script string, sent, payload int) (counts map[uint64]uint64, srcPort, dstPort int) {
	t.Helper()
	out := compile(t, script)
	coll := load(t, out)
	l, err := link.AttachTracing(link.TracingOptions{Program: coll.Programs[out.Programs[0].Name], AttachType: ebpf.AttachTraceRawTp})
	if err != nil {
		t.Fatalf("attach tp_btf: %v", err)
	}
	defer l.Close()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dstPort = pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	srcPort = conn.LocalAddr().(*net.UDPAddr).Port
	dst := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: dstPort}
	buf := make([]byte, payload)
	for i := 0; i < sent; i++ {
		if _, err := conn.WriteTo(buf, dst); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	l.Close()
	counts = map[uint64]uint64{}
	var key uint64
	var perCPU []uint64
	it := coll.Maps[codegen.MapName("")].Iterate()
	for it.Next(&key, &perCPU) {
		for _, v := range perCPU {
			counts[key] += v
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return counts, srcPort, dstPort
}

// TestHeaderFieldsEndToEnd checks sport, dport and l4proto, parsed from the
// IP and UDP headers of real packets, against the sockets that sent them.
func TestHeaderFieldsEndToEnd(t *testing.T) {
	const sent = 5
	counts, sport, dport := dropsByKey(t, `tracepoint:skb:kfree_skb /reason == "NO_SOCKET" && l4proto == udp/ { @[(sport << 32) | (dport << 8) | l4proto] = count() }`, sent, 100)
	want := uint64(sport)<<32 | uint64(dport)<<8 | 17
	if counts[want] != sent || len(counts) != 1 {
		t.Errorf("counts %v; want only key sport=%d dport=%d l4proto=17 with %d", counts, sport, dport, sent)
	}
}

// TestCountsDropsEndToEnd attaches a tp_btf program to skb:kfree_skb, sends
// UDP datagrams to a closed port on loopback, and checks that the map
// counted exactly those drops, keyed by the packet's length.
func TestCountsDropsEndToEnd(t *testing.T) {
	const sent = 7
	const payload = 1337
	counts, _, _ := dropsByKey(t, `tracepoint:skb:kfree_skb /reason == "NO_SOCKET"/ { @[len] = count() }`, sent, payload)
	// At udp_rcv the skb holds the UDP header and the payload.
	if got := counts[payload+8]; got != sent {
		t.Errorf("@[%d] = %d, want %d (all counts: %v)", payload+8, got, sent, counts)
	}
}
