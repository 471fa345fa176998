package codegen_test

import (
	"errors"
	"net"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
)

func compile(t testing.TB, text string) *codegen.Output {
	t.Helper()
	return compileWith(t, text, codegen.Options{})
}

// compileWith parses, checks and compiles a script with the given options.
func compileWith(t testing.TB, text string, opts codegen.Options) *codegen.Output {
	t.Helper()
	return compileArgs(t, text, nil, opts)
}

// compileArgs is compileWith for a script that takes arguments ($1...).
func compileArgs(t testing.TB, text string, params []string, opts codegen.Options) *codegen.Output {
	t.Helper()
	_, out := compiletest.Compile(t, text, check.Options{Params: params}, opts)
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

// TestAddressFieldsEndToEnd checks saddr, daddr and ipver, parsed from the
// IPv4 header of real packets (127.0.0.1 to 127.0.0.1), through address
// comparisons whose results make up the key.
func TestAddressFieldsEndToEnd(t *testing.T) {
	const sent = 3
	counts, _, _ := dropsByKey(t, `tracepoint:skb:kfree_skb /reason == "NO_SOCKET" && l4proto == udp/ {
		@[(saddr == 127.0.0.1) | (daddr in 127.0.0.0/8) << 1 | (saddr == ::1) << 2 | (daddr != 10.0.0.1) << 3 |
			(saddr == daddr) << 4 | (saddr in ::/0) << 5 | ipver << 8] = count() }`, sent, 10)
	want := uint64(1 | 2 | 8 | 16 | 4<<8)
	if counts[want] != sent || len(counts) != 1 {
		t.Errorf("counts %v; want only %#x with %d", counts, want, sent)
	}
}

// TestProbeReadFieldsEndToEnd checks members read with
// bpf_probe_read_kernel (past the BTF pointer: skb->dev->...) at their
// sizes, signed and unsigned, against the loopback device the packets
// were dropped on.
func TestProbeReadFieldsEndToEnd(t *testing.T) {
	const sent = 2
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skip(err)
	}
	counts, _, _ := dropsByKey(t, `tracepoint:skb:kfree_skb /reason == "NO_SOCKET"/ {
		@[(skb->dev->ifindex << 40) | (skb->dev->mtu << 8) | (skb->dev->ifindex - 2 < 0)] = count() }`, sent, 10)
	want := uint64(lo.Index)<<40 | uint64(lo.MTU)<<8 | 1
	if counts[want] != sent || len(counts) != 1 {
		t.Errorf("counts %v; want only %#x (ifindex %d, mtu %d, ifindex-2 negative) with %d", counts, want, lo.Index, lo.MTU, sent)
	}
}
