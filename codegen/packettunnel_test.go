package codegen

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/cilium/ebpf"
)

// TestIPTunnelEdgeRuns runs the IP tunnel edge's instructions in this
// kernel (BPF_PROG_TEST_RUN of a raw tracepoint program, whose context is
// the same array of arguments as an fentry's) on a tracked map with one
// followed skb: a GRE mask makes its edge encap with count 47, the skbs it
// made by splits kept; an IP-in-IPv6 mask sets TunnelOuter6 (the inner
// protocol unread: the skb's address is made up, so 0); a UDP tunnel's
// mask and an skb not followed leave the map as it was.
func TestIPTunnelEdgeRuns(t *testing.T) {
	const skb, other = 0x1000, 0x2000
	spec := &ebpf.CollectionSpec{
		Maps: map[string]*ebpf.MapSpec{TrackedMap: {Name: TrackedMap, Type: ebpf.LRUHash, KeySize: 8, ValueSize: trackValueSize, MaxEntries: 16}},
		Programs: map[string]*ebpf.ProgramSpec{"edge": {Name: "edge", Type: ebpf.RawTracepoint, License: "GPL",
			Instructions: ipTunnelInsns(112)}},
	}
	coll, err := ebpf.NewCollection(spec)
	if errors.Is(err, os.ErrPermission) || errors.Is(err, ebpf.ErrNotSupported) {
		t.Skipf("raw tracepoint programs not loaded here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer coll.Close()
	m := coll.Maps[TrackedMap]
	le := binary.LittleEndian
	const spawned = 3
	put := func() {
		v := make([]byte, trackValueSize)
		le.PutUint32(v, trackFollowed)
		le.PutUint64(v[trackPacketOff:], 0x1000000000007)
		le.PutUint64(v[trackPacketOff+8:], 0xabc)
		le.PutUint64(v[trackPacketOff+16:], EdgeOrigin|spawned<<(8*edgeSpawnOff))
		if err := m.Put(uint64(skb), v); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name        string
		arg, mask   uint64
		edge, paren uint64
	}{
		{"gre", skb, 1 << 6, EdgeEncap | spawned<<(8*edgeSpawnOff) | 47<<(8*edgeCountOff), 0},
		{"gre csum", skb, 1 << 7, EdgeEncap | spawned<<(8*edgeSpawnOff) | 47<<(8*edgeCountOff), 0},
		{"ip in ipv6", skb, 1 << 9, EdgeEncap | spawned<<(8*edgeSpawnOff) | TunnelOuter6<<(8*edgeCountOff), 0},
		{"udp tunnel", skb, 1 << 10, EdgeOrigin | spawned<<(8*edgeSpawnOff), 0xabc},
		{"not followed", other, 1 << 6, EdgeOrigin | spawned<<(8*edgeSpawnOff), 0xabc},
	} {
		put()
		ctx := make([]byte, 16)
		le.PutUint64(ctx, c.arg)
		le.PutUint64(ctx[8:], c.mask)
		if _, err := coll.Programs["edge"].Run(&ebpf.RunOptions{Context: ctx}); err != nil {
			if errors.Is(err, ebpf.ErrNotSupported) {
				t.Skipf("BPF_PROG_TEST_RUN of a raw tracepoint not supported here: %v", err)
			}
			t.Fatalf("%s: %v", c.name, err)
		}
		v := make([]byte, trackValueSize)
		if err := m.Lookup(uint64(skb), v); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if e, p := le.Uint64(v[trackPacketOff+16:]), le.Uint64(v[trackPacketOff+8:]); e != c.edge || p != c.paren {
			t.Errorf("%s: edge %#x parent %#x; want %#x, %#x", c.name, e, p, c.edge, c.paren)
		}
		if id := le.Uint64(v[trackPacketOff:]); id != 0x1000000000007 {
			t.Errorf("%s: packet %#x changed", c.name, id)
		}
		if err := m.Lookup(uint64(other), v); err == nil {
			t.Errorf("%s: an skb not followed got an entry", c.name)
		}
	}
}
