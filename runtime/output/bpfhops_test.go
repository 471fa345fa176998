package output

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/lang/types"
)

// hopEvents are the records of BPF programs as hops, as codegen makes
// them: a tc program's entry and return (its verdict), kfree_skb, and an
// XDP program's entry and return, whose skb field is the frame's xdp_buff.
func hopEvents() []*codegen.Event {
	ev := func(id int, name string, ret, frame bool, verdict string) *codegen.Event {
		e := &codegen.Event{ID: id, Kind: codegen.EventPrint, Probe: name, Return: ret, Frame: frame, Size: 56,
			Args: []codegen.EventArg{{Name: "len", Type: types.U32, Offset: 48, Size: 8}}}
		if ret {
			e.Args = append([]codegen.EventArg{{Name: "retval", Type: check.BPFVerdict(verdict), Offset: 40, Size: 8}}, e.Args...)
		}
		return e
	}
	return []*codegen.Event{
		ev(0, "tc_drop9", false, false, ""),
		ev(1, "tc_drop9", true, false, "tc"),
		ev(2, "kfree_skb", false, false, ""),
		ev(3, "xdp_drop9", false, true, ""),
		ev(4, "xdp_drop9", true, true, "xdp"),
	}
}

// hopRecord is a record of hopEvents' event id.
func hopRecord(ev *codegen.Event, skb, ns, verdict, length uint64) []byte {
	b := make([]byte, ev.Size)
	le := binary.LittleEndian
	le.PutUint64(b, uint64(ev.ID))
	le.PutUint64(b[codegen.PrintTime:], ns)
	le.PutUint64(b[codegen.PrintSkb:], skb)
	le.PutUint64(b[40:], verdict)
	le.PutUint64(b[48:], length)
	return b
}

// TestTimelineBPFHops checks BPF programs as hops of --timeline: a tc
// program's entry and its return with the verdict by name in its skb's
// block; an XDP program's in a frame's block, which its verdict ends, so
// that the next frame in the same xdp_buff (read in the same batch, before
// the blocks are printed) is a block of its own; in text and in JSON.
func TestTimelineBPFHops(t *testing.T) {
	events := hopEvents()
	for _, json := range []bool{false, true} {
		p := newPrinter(nil, events, NewValues())
		tl := newTimeline(p.boot, json)
		tl.add(p, events[3], hopRecord(events[3], 0xf00, 1_000_000, 0, 49))
		tl.add(p, events[4], hopRecord(events[4], 0xf00, 1_001_000, 1, 49))
		tl.add(p, events[3], hopRecord(events[3], 0xf00, 1_002_000, 0, 48))
		tl.add(p, events[4], hopRecord(events[4], 0xf00, 1_003_000, 2, 48))
		tl.add(p, events[0], hopRecord(events[0], 0xa00, 2_000_000, 0, 49))
		tl.add(p, events[1], hopRecord(events[1], 0xa00, 2_002_000, 2, 49))
		tl.add(p, events[2], hopRecord(events[2], 0xa00, 2_003_000, 0, 49))
		got := string(tl.flush(nil, time.Now().Add(-time.Hour), false))
		at := func(ns int64) string { return p.boot.Add(time.Duration(ns)).Format("15:04:05.000000") }
		want := "frame 0xf00 at " + at(1_000_000) + "\n" +
			"  +     0.000us  xdp_drop9                len=49\n" +
			"  +     1.000us  xdp_drop9                retval=XDP_DROP len=49\n\n" +
			"frame 0xf00 at " + at(1_002_000) + "\n" +
			"  +     0.000us  xdp_drop9                len=48\n" +
			"  +     1.000us  xdp_drop9                retval=XDP_PASS len=48\n\n" +
			"skb 0xa00 at " + at(2_000_000) + "\n" +
			"  +     0.000us  tc_drop9                 len=49\n" +
			"  +     2.000us  tc_drop9                 retval=TC_ACT_SHOT len=49\n" +
			"  +     3.000us  kfree_skb                len=49\n\n"
		if json {
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			if len(lines) != 3 || !strings.Contains(lines[0], `"frame":true,"hops":[`) || !strings.Contains(lines[0], `"data":{"len":49,"retval":"XDP_DROP"}`) ||
				!strings.Contains(lines[1], `"data":{"len":48,"retval":"XDP_PASS"}`) || strings.Contains(lines[2], `"frame"`) ||
				!strings.Contains(lines[2], `"data":{"len":49,"retval":"TC_ACT_SHOT"},"delta_ns":2000,"func":"tc_drop9"`) {
				t.Errorf("JSON blocks:\n%s", got)
			}
			continue
		}
		if got != want {
			t.Errorf("blocks:\n%s\nwant\n%s", got, want)
		}
	}
}

// TestGraphBPFHops checks BPF programs in --graph: a tc program's entry
// and return nest as a call whose return value is the verdict by name;
// an XDP program's frame is a block of its own, headed frame, and the
// next frame in the same xdp_buff another.
func TestGraphBPFHops(t *testing.T) {
	events := hopEvents()
	p := newPrinter(nil, events, NewValues())
	gr := newGraph(p.boot, false)
	gr.add(p, events[3], hopRecord(events[3], 0xf00, 1_000_000, 0, 49))
	gr.add(p, events[4], hopRecord(events[4], 0xf00, 1_001_000, 1, 49))
	gr.add(p, events[3], hopRecord(events[3], 0xf00, 1_002_000, 0, 48))
	gr.add(p, events[4], hopRecord(events[4], 0xf00, 1_003_000, 2, 48))
	gr.add(p, events[0], hopRecord(events[0], 0xa00, 2_000_000, 0, 49))
	gr.add(p, events[2], hopRecord(events[2], 0xa00, 2_001_000, 0, 49))
	gr.add(p, events[1], hopRecord(events[1], 0xa00, 2_002_000, 2, 49))
	got := string(gr.flush(nil, time.Now().Add(-time.Hour), false))
	at := func(ns int64) string { return p.boot.Add(time.Duration(ns)).Format("15:04:05.000000") }
	want := "frame 0xf00 on CPU 0 at " + at(1_000_000) + "\n" +
		"               | xdp_drop9() = XDP_DROP len=49 len=49\n\n" +
		"frame 0xf00 on CPU 0 at " + at(1_002_000) + "\n" +
		"               | xdp_drop9() = XDP_PASS len=48 len=48\n\n" +
		"skb 0xa00 on CPU 0 at " + at(2_000_000) + "\n" +
		"               | tc_drop9() { len=49\n" +
		"               |   kfree_skb() { len=49\n" +
		"               | } tc_drop9 = TC_ACT_SHOT len=49\n\n"
	if got != want {
		t.Errorf("blocks:\n%s\nwant\n%s", got, want)
	}
}

// TestGraphJSONBPFHops: with -f json a frame's block says "frame":true, an
// skb's does not, and the tc program's call has its verdict by name.
func TestGraphJSONBPFHops(t *testing.T) {
	events := hopEvents()
	p := newPrinter(nil, events, NewValues())
	gr := newGraph(p.boot, true)
	gr.add(p, events[3], hopRecord(events[3], 0xf00, 1_000_000, 0, 49))
	gr.add(p, events[4], hopRecord(events[4], 0xf00, 1_001_000, 1, 49))
	gr.add(p, events[0], hopRecord(events[0], 0xa00, 2_000_000, 0, 49))
	gr.add(p, events[1], hopRecord(events[1], 0xa00, 2_002_000, 2, 49))
	lines := strings.Split(strings.TrimSuffix(string(gr.flush(nil, time.Time{}, true)), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"frame":true,"skb":"0xf00"`) || !strings.Contains(lines[0], `"XDP_DROP"`) ||
		strings.Contains(lines[1], `"frame"`) || !strings.Contains(lines[1], `"TC_ACT_SHOT"`) {
		t.Errorf("JSON blocks:\n%s", strings.Join(lines, "\n"))
	}
}
