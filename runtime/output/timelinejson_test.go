package output

import (
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/btf"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit"
)

// TestTimelineJSON feeds the JSON timeline a packet's hops and its drop:
// the block comes out as one JSON object on one line, its hops in order
// with their values, CPU, time and time since the first hop, and the drop's
// function, reason and location; a block without a reason has no drop.
func TestTimelineJSON(t *testing.T) {
	events := compilePrinter(t, `tracepoint:net:net_dev_queue { print(dev, len) }
tracepoint:skb:kfree_skb { print(reason, ksym(location)) }`)
	p := testPrinter(nil, events, true)
	tl := newTimeline(p.boot, true)
	queue, free := events[0], events[1]
	le := binary.LittleEndian
	rec := func(ev *codegen.Event, skb, cpu, ns uint64, vals ...any) []byte {
		b := make([]byte, ev.Size)
		le.PutUint64(b, uint64(ev.ID))
		le.PutUint64(b[codegen.PrintTime:], ns)
		le.PutUint64(b[codegen.PrintCPU:], cpu)
		le.PutUint64(b[codegen.PrintSkb:], skb)
		for i, v := range vals {
			raw := b[ev.Args[i].Offset:]
			switch v := v.(type) {
			case string:
				copy(raw, v)
			case uint64:
				le.PutUint64(raw, v)
			}
		}
		return b
	}
	en, ok := free.Args[0].Type.BTF.(*btf.Enum)
	if !ok {
		t.Fatalf("kfree_skb's reason is a %T, not an enum", free.Args[0].Type.BTF)
	}
	var noSocket uint64
	for _, e := range en.Values {
		if strings.HasSuffix(e.Name, "_NO_SOCKET") {
			noSocket = e.Value
		}
	}
	var loc uint64 = 0xffffffff81000000
	tl.add(p, queue, rec(queue, 0xa00, 1, 1_000_000, "v1", uint64(43)))
	tl.add(p, queue, rec(queue, 0xb00, 0, 1_500_000, "v2", uint64(60)))
	tl.add(p, queue, rec(queue, 0xa00, 0, 1_031_849, "v2", uint64(29)))
	tl.add(p, free, rec(free, 0xa00, 0, 1_096_570, noSocket, loc))
	out := string(tl.flush(nil, time.Now().Add(-time.Hour), false))
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "}\n") {
		t.Fatalf("the freed block is not one line:\n%s", out)
	}
	var blk testkit.TimelineBlock
	if err := json.Unmarshal([]byte(out), &blk); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	at := func(ns int64) string { return p.boot.Add(time.Duration(ns)).Format(time.RFC3339Nano) }
	if blk.Type != "timeline" || blk.Skb != "0xa00" || blk.Time != at(1_000_000) {
		t.Errorf("block type %q skb %q time %q", blk.Type, blk.Skb, blk.Time)
	}
	want := []struct {
		cpu   uint64
		delta uint64
		fn    string
		data  string
	}{
		{1, 0, "net_dev_queue", `{"dev":"v1","len":43}`},
		{0, 31_849, "net_dev_queue", `{"dev":"v2","len":29}`},
		{0, 96_570, "kfree_skb", `{"ksym(location)":"` + p.fmt.ksyms.Name(loc) + `","reason":"NO_SOCKET"}`},
	}
	if len(blk.Hops) != len(want) {
		t.Fatalf("%d hops, want %d:\n%s", len(blk.Hops), len(want), out)
	}
	for i, w := range want {
		h := blk.Hops[i]
		data, _ := json.Marshal(h.Data)
		if h.CPU == nil || *h.CPU != w.cpu || h.DeltaNs == nil || *h.DeltaNs != w.delta || h.Func != w.fn || string(data) != w.data ||
			h.Time != at(1_000_000+int64(w.delta)) {
			t.Errorf("hop %d: %+v data %s; want %+v", i, h, data, w)
		}
	}
	wantDrop := map[string]string{"func": "kfree_skb", "reason": "NO_SOCKET", "location": p.fmt.ksyms.Name(loc)}
	if len(blk.Drop) != 3 || blk.Drop["func"] != wantDrop["func"] || blk.Drop["reason"] != wantDrop["reason"] || blk.Drop["location"] != wantDrop["location"] {
		t.Errorf("drop %v, want %v", blk.Drop, wantDrop)
	}
	out = string(tl.flush(nil, time.Time{}, true))
	want2 := `{"hops":[{"cpu":0,"data":{"dev":"v2","len":60},"delta_ns":0,"func":"net_dev_queue","time":"` + at(1_500_000) +
		`"}],"skb":"0xb00","time":"` + at(1_500_000) + `","type":"timeline"}` + "\n"
	if out != want2 {
		t.Errorf("block without a drop:\n%s\nwant\n%s", out, want2)
	}
}
