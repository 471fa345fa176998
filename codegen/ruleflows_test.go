package codegen_test

import (
	"fmt"
	"net"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/skbtrace/skbtrace/codegen"
)

// TestRuleFlows: a map keyed by rule() keeps an element for each flow only
// where the nftables trace needs the flow to match drops by (RuleFlows,
// --nftrace); otherwise rule()'s addresses and ports are zero and the
// drops of three flows count in one element. Three sockets send to a
// closed port on loopback (one drop each, NO_SOCKET).
func TestRuleFlows(t *testing.T) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dport := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	script := fmt.Sprintf(`tracepoint:skb:kfree_skb /l4proto == udp && dport == %d/ { @[rule(reason, netns, dev, l4proto, saddr, sport, daddr, dport)] = count() }`, dport)
	for _, tc := range []struct {
		flows bool
		want  int
	}{{false, 1}, {true, 3}} {
		out := compileWith(t, script, codegen.Options{RuleFlows: tc.flows})
		coll := load(t, out)
		l, err := link.AttachTracing(link.TracingOptions{Program: coll.Programs[out.Programs[0].Name], AttachType: ebpf.AttachTraceRawTp})
		if err != nil {
			t.Fatalf("attach tp_btf: %v", err)
		}
		for range 3 {
			c, err := net.Dial("udp4", fmt.Sprintf("127.0.0.1:%d", dport))
			if err != nil {
				t.Fatal(err)
			}
			c.Write([]byte("x"))
			c.Close()
		}
		l.Close()
		var m *ebpf.Map
		for _, mm := range coll.Maps {
			if info, err := mm.Info(); err == nil && (info.Type == ebpf.Hash || info.Type == ebpf.PerCPUHash) && mm.KeySize() > 16 {
				m = mm
			}
		}
		if m == nil {
			t.Fatal("no map keyed by rule()")
		}
		keys, total := 0, uint64(0)
		key := make([]byte, m.KeySize())
		var perCPU []uint64
		it := m.Iterate()
		for it.Next(&key, &perCPU) {
			keys++
			for _, v := range perCPU {
				total += v
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		if keys != tc.want || total != 3 {
			t.Errorf("RuleFlows %v: %d elements counting %d drops; want %d counting 3", tc.flows, keys, total, tc.want)
		}
	}
}
