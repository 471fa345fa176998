package output

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// TestGraphBlocks feeds the graph the records of a packet's calls on two
// CPUs: on CPU 0, a complete tree comes out nested, a call with nothing
// inside on one line, times on the left, return values after the calls;
// on CPU 1, a return whose entry was not printed holds the calls before it.
func TestGraphBlocks(t *testing.T) {
	retPtr := types.Type{Kind: types.Ptr, Size: 8}
	ev := func(id int, fn string, ret bool, rt types.Type) *codegen.Event {
		e := &codegen.Event{ID: id, Kind: codegen.EventPrint, Probe: fn, Return: ret, Size: 40}
		if ret {
			e.Args = []codegen.EventArg{{Name: "retval", Type: rt, Offset: 40, Size: 8}, {Name: "duration", Type: types.U64, Offset: 48, Size: 8}}
		} else {
			e.Args = []codegen.EventArg{{Name: "skb", Type: retPtr, Offset: 40, Size: 8}, {Name: "len", Type: types.U32, Offset: 48, Size: 8}}
		}
		e.Size = 56
		return e
	}
	events := []*codegen.Event{
		ev(0, "ip_rcv", false, types.Type{}),
		ev(1, "ip_rcv_core", false, types.Type{}),
		ev(2, "ip_rcv_core", true, retPtr),
		ev(3, "ip_local_deliver", false, types.Type{}),
		ev(4, "ip_local_deliver", true, types.S32),
		ev(5, "ip_rcv", true, types.S32),
		ev(6, "__netif_receive_skb_core", true, types.S32),
	}
	p := newPrinter(nil, events, NewValues())
	gr := newGraph(p.boot, false)
	rec := func(id int, skb, cpu, ns, a, b uint64) []byte {
		e := events[id]
		buf := make([]byte, e.Size)
		le := binary.LittleEndian
		le.PutUint64(buf, uint64(id))
		le.PutUint64(buf[codegen.PrintTime:], ns)
		le.PutUint64(buf[codegen.PrintCPU:], cpu)
		le.PutUint64(buf[codegen.PrintSkb:], skb)
		le.PutUint64(buf[40:], a)
		le.PutUint64(buf[48:], b)
		return buf
	}
	gr.add(p, events[0], rec(0, 0xa00, 0, 1_000_000, 0xa00, 33))
	gr.add(p, events[3], rec(3, 0xb00, 1, 1_000_500, 0xb00, 61))
	gr.add(p, events[1], rec(1, 0xa00, 0, 1_001_000, 0xa00, 33))
	gr.add(p, events[2], rec(2, 0xa00, 0, 1_002_000, 0xa00, 1234))
	gr.add(p, events[3], rec(3, 0xa00, 0, 1_003_000, 0xa00, 33))
	gr.add(p, events[4], rec(4, 0xa00, 0, 1_004_000, 0, 1000))
	if got := string(gr.flush(nil, time.Now().Add(-time.Hour), false)); got != "" {
		t.Fatalf("blocks came out before their outermost call returned:\n%s", got)
	}
	gr.add(p, events[5], rec(5, 0xa00, 0, 1_005_000, 0, 5_000_500))
	at := p.boot.Add(time.Millisecond).Format("15:04:05.000000")
	want := "skb 0xa00 on CPU 0 at " + at + "\n" +
		"               | ip_rcv() { len=33\n" +
		"      1.234 us |   ip_rcv_core() = 0xa00 len=33\n" +
		"      1.000 us |   ip_local_deliver() = 0 len=33\n" +
		"   5000.500 us | } ip_rcv = 0\n\n"
	if got := string(gr.flush(nil, time.Now().Add(-time.Hour), false)); got != want {
		t.Errorf("complete block:\n%s\nwant\n%s", got, want)
	}
	gr.add(p, events[4], rec(4, 0xb00, 1, 1_006_000, 0xffffffffffffffff, 2000))
	gr.add(p, events[6], rec(6, 0xb00, 1, 1_007_000, 1, 9000))
	want = "skb 0xb00 on CPU 1 at " + p.boot.Add(1_000_500).Format("15:04:05.000000") + "\n" +
		"               | __netif_receive_skb_core() {\n" +
		"      2.000 us |   ip_local_deliver() = -1 len=61\n" +
		"      9.000 us | } __netif_receive_skb_core = 1\n\n"
	if got := string(gr.flush(nil, time.Time{}, true)); got != want {
		t.Errorf("block of a return whose entry was not seen:\n%s\nwant\n%s", got, want)
	}
	if !gr.deadline().IsZero() {
		t.Error("blocks are left after every one was printed")
	}
}
