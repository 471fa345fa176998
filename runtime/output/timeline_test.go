package output

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/codegen"
)

// TestTimelineBlocks feeds the timeline two packets' records: the one whose
// skb is freed comes out as a block with its hops and their times since the
// first; the other waits until it has been quiet, then comes out too.
func TestTimelineBlocks(t *testing.T) {
	events := compilePrinter(t, `tracepoint:net:net_dev_queue { print(len) }
tracepoint:skb:kfree_skb { print(len) }`)
	p := newPrinter(nil, events, NewValues())
	tl := newTimeline(p.boot, false)
	rec := func(ev *codegen.Event, skb, ns, length uint64) []byte {
		b := make([]byte, ev.Size)
		le := binary.LittleEndian
		le.PutUint64(b, uint64(ev.ID))
		le.PutUint64(b[codegen.PrintTime:], ns)
		le.PutUint64(b[codegen.PrintSkb:], skb)
		le.PutUint64(b[ev.Args[0].Offset:], length)
		return b
	}
	queue, free := events[0], events[1]
	tl.add(p, queue, rec(queue, 0xa00, 1_000_000, 100))
	tl.add(p, queue, rec(queue, 0xb00, 1_500_000, 200))
	tl.add(p, free, rec(free, 0xa00, 3_250_000, 86))
	got := string(tl.flush(nil, time.Now().Add(-time.Hour), false))
	at := p.boot.Add(time.Millisecond).Format("15:04:05.000000")
	want := "skb 0xa00 at " + at + "\n" +
		"  +     0.000us  net_dev_queue            len=100\n" +
		"  +  2250.000us  kfree_skb                len=86\n\n"
	if got != want {
		t.Errorf("freed block:\n%q\nwant\n%q", got, want)
	}
	if d := tl.deadline(); d.IsZero() || time.Until(d) > TimelineQuiet {
		t.Errorf("the open block's deadline is %v", d)
	}
	got = string(tl.flush(nil, time.Now().Add(time.Hour), false))
	if !strings.HasPrefix(got, "skb 0xb00 at ") || !strings.Contains(got, "net_dev_queue            len=200\n") {
		t.Errorf("the quiet block did not come out:\n%s", got)
	}
	if !tl.deadline().IsZero() || len(tl.flush(nil, time.Time{}, true)) != 0 {
		t.Error("blocks are left after every one was printed")
	}
}

// TestTimelineReusedAddress: a freed skb's block takes the drop's reason
// from kfree_skb that comes after the function that freed it, but a new
// packet at the same address, read before the blocks are printed, is a
// block of its own.
func TestTimelineReusedAddress(t *testing.T) {
	events := compilePrinter(t, `tracepoint:net:net_dev_queue { print(len) }
tracepoint:skb:kfree_skb { print(len) }`)
	p := newPrinter(nil, events, NewValues())
	tl := newTimeline(p.boot, false)
	rec := func(ev *codegen.Event, ns, length uint64) []byte {
		b := make([]byte, ev.Size)
		le := binary.LittleEndian
		le.PutUint64(b, uint64(ev.ID))
		le.PutUint64(b[codegen.PrintTime:], ns)
		le.PutUint64(b[codegen.PrintSkb:], 0xa00)
		le.PutUint64(b[ev.Args[0].Offset:], length)
		return b
	}
	queue, free := events[0], events[1]
	tl.add(p, queue, rec(queue, 1_000_000, 100))
	tl.add(p, free, rec(free, 2_000_000, 100))
	tl.add(p, free, rec(free, 2_500_000, 100))
	tl.add(p, queue, rec(queue, 3_000_000, 200))
	got := string(tl.flush(nil, time.Now().Add(-time.Hour), true))
	at := func(ns int64) string { return p.boot.Add(time.Duration(ns)).Format("15:04:05.000000") }
	want := "skb 0xa00 at " + at(1_000_000) + "\n" +
		"  +     0.000us  net_dev_queue            len=100\n" +
		"  +  1000.000us  kfree_skb                len=100\n" +
		"  +  1500.000us  kfree_skb                len=100\n\n" +
		"skb 0xa00 at " + at(3_000_000) + "\n" +
		"  +     0.000us  net_dev_queue            len=200\n\n"
	if got != want {
		t.Errorf("blocks:\n%s\nwant\n%s", got, want)
	}
}
