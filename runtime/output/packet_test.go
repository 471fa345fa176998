package output

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
)

// TestTimelinePacketSplit feeds the timeline a GSO skb's records as a
// tracking script writes them: the skb, its free (having made 2
// segments) and then the segments' hops and frees. One block for the
// packet: the segments' lines say which they are, their hops carry their
// address, and the block ends only once both segments are freed.
func TestTimelinePacketSplit(t *testing.T) {
	events := compilePrinter(t, `tracepoint:net:net_dev_queue { track(); print(len) }
tracepoint:skb:consume_skb { print(len) }`)
	p := newPrinter(nil, events, NewValues())
	tl := newTimeline(p.boot, false)
	const id, gso = 0x1000000000007, 0xa00
	edge := func(kind uint8, spawned, index, count uint16) uint64 {
		return uint64(kind) | uint64(spawned)<<16 | uint64(index)<<32 | uint64(count)<<48
	}
	rec := func(ev *codegen.Event, skb, ns, parent, e uint64) []byte {
		if !ev.Packet {
			t.Fatal("a tracking script's print has no packet")
		}
		b := make([]byte, ev.Size)
		le := binary.LittleEndian
		le.PutUint64(b, uint64(ev.ID))
		le.PutUint64(b[codegen.PrintTime:], ns)
		le.PutUint64(b[codegen.PrintSkb:], skb)
		le.PutUint64(b[codegen.PrintPacket:], id)
		le.PutUint64(b[codegen.PrintParent:], parent)
		le.PutUint64(b[codegen.PrintEdge:], e)
		le.PutUint64(b[ev.Args[0].Offset:], 1000)
		return b
	}
	queue, free := events[0], events[1]
	tl.add(p, queue, rec(queue, gso, 1_000, 0, edge(codegen.EdgeOrigin, 0, 0, 0)))
	tl.add(p, free, rec(free, gso, 2_000, 0, edge(codegen.EdgeOrigin, 2, 0, 0)))
	tl.add(p, queue, rec(queue, 0xb00, 3_000, gso, edge(codegen.EdgeSegment, 0, 1, 2)))
	tl.add(p, free, rec(free, 0xb00, 4_000, gso, edge(codegen.EdgeSegment, 0, 1, 2)))
	if got := tl.flush(nil, time.Now().Add(-time.Hour), false); len(got) != 0 {
		t.Fatalf("the block ended with a segment not yet seen:\n%s", got)
	}
	tl.add(p, queue, rec(queue, 0xc00, 5_000, gso, edge(codegen.EdgeSegment, 0, 2, 2)))
	tl.add(p, free, rec(free, 0xc00, 6_000, gso, edge(codegen.EdgeSegment, 0, 2, 2)))
	got := string(tl.flush(nil, time.Now().Add(-time.Hour), false))
	for _, want := range []string{
		"skb 0xa00 at ", " packet 0x1000000000007\n",
		"us  0xb00 is segment 1 of 2 of 0xa00\n", "us  0xb00 net_dev_queue",
		"us  0xc00 is segment 2 of 2 of 0xa00\n", "us  0xc00 consume_skb",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if strings.Count(got, "skb 0x") != 1 || strings.Count(got, "\n") != 10 {
		t.Errorf("want one block of 9 lines and its blank line:\n%s", got)
	}
}

// TestTimelinePacketMerge: GRO merges a packet's second segment into its
// first; the merged skb's next hop (its head stolen and freed) says so.
func TestTimelinePacketMerge(t *testing.T) {
	events := compilePrinter(t, `tracepoint:net:netif_receive_skb { track(); print(len) }`)
	p := newPrinter(nil, events, NewValues())
	tl := newTimeline(p.boot, false)
	ev := events[0]
	rec := func(skb, ns, parent, e uint64) []byte {
		b := make([]byte, ev.Size)
		le := binary.LittleEndian
		le.PutUint64(b, uint64(ev.ID))
		le.PutUint64(b[codegen.PrintTime:], ns)
		le.PutUint64(b[codegen.PrintSkb:], skb)
		le.PutUint64(b[codegen.PrintPacket:], 0x1000000000009)
		le.PutUint64(b[codegen.PrintParent:], parent)
		le.PutUint64(b[codegen.PrintEdge:], e)
		return b
	}
	seg := func(i uint64) uint64 { return codegen.EdgeSegment | i<<32 | 2<<48 }
	tl.add(p, ev, rec(0xb00, 1_000, 0xa00, seg(1)))
	tl.add(p, ev, rec(0xc00, 2_000, 0xa00, seg(2)))
	tl.add(p, ev, rec(0xc00, 3_000, 0xb00, codegen.EdgeMerged|2<<32|2<<48))
	got := string(tl.flush(nil, time.Now().Add(time.Hour), true))
	if !strings.Contains(got, "us  0xc00 merged into 0xb00\n") || strings.Count(got, "skb 0x") != 1 {
		t.Errorf("want one block with the merge:\n%s", got)
	}
}

// TestGraphPacket: a tracking script's graph block names its skb's
// packet and, for a segment, which one it is, in text and in JSON.
func TestGraphPacket(t *testing.T) {
	events := compilePrinter(t, `tracepoint:net:netif_receive_skb { track(); print(len) }`)
	ev := events[0]
	rec := func(skb uint64) []byte {
		b := make([]byte, ev.Size)
		le := binary.LittleEndian
		le.PutUint64(b, uint64(ev.ID))
		le.PutUint64(b[codegen.PrintTime:], 1000)
		le.PutUint64(b[codegen.PrintSkb:], skb)
		le.PutUint64(b[codegen.PrintPacket:], 0x100000000000a)
		le.PutUint64(b[codegen.PrintParent:], 0xa00)
		le.PutUint64(b[codegen.PrintEdge:], codegen.EdgeSegment|2<<32|10<<48)
		return b
	}
	for _, json := range []bool{false, true} {
		p := newPrinter(nil, events, NewValues())
		gr := newGraph(p.boot, json)
		gr.add(p, ev, rec(0xc00))
		got := string(gr.flush(nil, time.Time{}, true))
		want := " packet 0x100000000000a (0xc00 is segment 2 of 10 of 0xa00)\n"
		if json {
			want = `"edge":{"count":10,"index":2,"kind":"segment","parent":"0xa00"},"packet":"0x100000000000a"`
		}
		if !strings.Contains(got, want) {
			t.Errorf("json %v: no %q in\n%s", json, want, got)
		}
	}
}

// TestEventJSONPacket: -f json's event of a tracking script names its
// packet, in json.Marshal's key order.
func TestEventJSONPacket(t *testing.T) {
	events := compilePrinter(t, `tracepoint:net:netif_receive_skb { track(); print(len) }`)
	p := newPrinter(nil, events, NewValues())
	ev := events[0]
	b := make([]byte, ev.Size)
	le := binary.LittleEndian
	le.PutUint64(b, uint64(ev.ID))
	le.PutUint64(b[codegen.PrintSkb:], 0xa00)
	le.PutUint64(b[codegen.PrintPacket:], 0x100000000000b)
	got := string(jsonFormat{p}.Record(nil, ev, b))
	if !strings.Contains(got, `"func":"netif_receive_skb","packet":"0x100000000000b","skb":"0xa00"`) {
		t.Errorf("event %s", got)
	}
}

// TestTimelinePacketEncap: a followed skb put in vxlan 42 (its edge then
// encap, the port as index, the VNI as parent) or in an IP tunnel (index
// 0, the outer protocol as count) says so once, in text and JSON, in its
// one block; a port or protocol that is no known tunnel's is named.
func TestTimelinePacketEncap(t *testing.T) {
	events := compilePrinter(t, `tracepoint:net:net_dev_queue { track(); print(len) }`)
	ev := events[0]
	udp := func(port uint64) uint64 { return codegen.EdgeEncap | port<<32 }
	ip := func(count uint64) uint64 { return codegen.EdgeEncap | count<<48 }
	for _, c := range []struct {
		json         bool
		parent, edge uint64
		want         string
	}{
		{false, 42, udp(4789), "us  0xa00 encapsulated in vxlan 42\n"},
		{false, 42, udp(9999), "us  0xa00 encapsulated in UDP port 9999\n"},
		{true, 42, udp(6081), `"edge":{"kind":"encap","port":6081,"tunnel":"geneve","vni":42}`},
		{false, 0, ip(47), "us  0xa00 encapsulated in gre\n"},
		{false, 0, ip(4), "us  0xa00 encapsulated in ipip\n"},
		{false, 0, ip(41), "us  0xa00 encapsulated in sit\n"},
		{false, 0, ip(41 | codegen.TunnelOuter6), "us  0xa00 encapsulated in ip6ip6\n"},
		{false, 0, ip(0), "us  0xa00 encapsulated in IP protocol 0\n"},
		{true, 0, ip(47 | codegen.TunnelOuter6), `"edge":{"kind":"encap","proto":47,"tunnel":"gre"}`},
		{true, 0, ip(4 | codegen.TunnelOuter6), `"edge":{"kind":"encap","proto":4,"tunnel":"ip4ip6"}`},
		{true, 0, ip(0), `"edge":{"kind":"encap","proto":0}`},
	} {
		p := newPrinter(nil, events, NewValues())
		tl := newTimeline(p.boot, c.json)
		rec := func(ns, parent, e uint64) []byte {
			b := make([]byte, ev.Size)
			le := binary.LittleEndian
			le.PutUint64(b, uint64(ev.ID))
			le.PutUint64(b[codegen.PrintTime:], ns)
			le.PutUint64(b[codegen.PrintSkb:], 0xa00)
			le.PutUint64(b[codegen.PrintPacket:], 0x100000000000c)
			le.PutUint64(b[codegen.PrintParent:], parent)
			le.PutUint64(b[codegen.PrintEdge:], e)
			return b
		}
		tl.add(p, ev, rec(1_000, 0, codegen.EdgeOrigin))
		tl.add(p, ev, rec(2_000, c.parent, c.edge))
		tl.add(p, ev, rec(3_000, c.parent, c.edge))
		got := string(tl.flush(nil, time.Now().Add(time.Hour), true))
		if strings.Count(got, c.want) != 1 || strings.Count(got, "encap") != 1 {
			t.Errorf("json %v: want one %q in\n%s", c.json, c.want, got)
		}
	}
}
