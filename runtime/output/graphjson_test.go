package output

import (
	"encoding/binary"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit"
	"github.com/skbtrace/skbtrace/lang/types"
)

// TestGraphJSON feeds the JSON graph a packet's calls on two CPUs and
// parses the blocks back: on CPU 0 the calls nest as the text's lines do,
// each with its depth, values (the entry's and the return's, the return's
// winning), duration and retval (a pointer in hex, a mixed retval as its
// function returns it), and a call whose return was not seen has neither;
// on CPU 1, a return whose entry was not seen holds the calls before it,
// its void retval null.
func TestGraphJSON(t *testing.T) {
	ptr := types.Type{Kind: types.Ptr, Size: 8}
	arg := func(name string, t types.Type, off int) codegen.EventArg {
		return codegen.EventArg{Name: name, Type: t, Offset: off, Size: 8}
	}
	entry := func(id int, fn string) *codegen.Event {
		return &codegen.Event{ID: id, Kind: codegen.EventPrint, Probe: fn, Size: 56,
			Args: []codegen.EventArg{arg("skb", ptr, 40), arg("len", types.U32, 48)}}
	}
	ret := func(id int, fn string, rt types.Type, extra ...codegen.EventArg) *codegen.Event {
		return &codegen.Event{ID: id, Kind: codegen.EventPrint, Probe: fn, Return: true, Size: 64,
			Args: append([]codegen.EventArg{arg("retval", rt, 40), arg("duration", types.U64, 48)}, extra...)}
	}
	events := []*codegen.Event{
		entry(0, "ip_rcv"),
		entry(1, "ip_rcv_core"),
		ret(2, "ip_rcv_core", ptr, arg("len", types.U32, 56)),
		entry(3, "ip_local_deliver"),
		entry(4, "ip_local_deliver_finish"),
		ret(5, "ip_local_deliver", check.MixedRetval),
		ret(6, "ip_rcv", types.S32),
		ret(7, "__netif_receive_skb_core", check.MixedRetval),
	}
	p := testPrinter(nil, events, true)
	p.rets = map[string]codegen.RetClass{
		"ip_local_deliver":         {Size: 4, Signed: true},
		"__netif_receive_skb_core": {},
	}
	gr := newGraph(p.boot, true)
	add := func(id int, skb, cpu, ns uint64, vals ...uint64) {
		e := events[id]
		b := make([]byte, e.Size)
		le := binary.LittleEndian
		le.PutUint64(b, uint64(id))
		le.PutUint64(b[codegen.PrintTime:], ns)
		le.PutUint64(b[codegen.PrintCPU:], cpu)
		le.PutUint64(b[codegen.PrintSkb:], skb)
		for i, v := range vals {
			le.PutUint64(b[40+8*i:], v)
		}
		gr.add(p, e, b)
	}
	add(0, 0xa00, 0, 1_000_000, 0xa00, 33)
	add(3, 0xb00, 1, 1_000_500, 0xb00, 61)
	add(1, 0xa00, 0, 1_001_000, 0xa00, 33)
	add(2, 0xa00, 0, 1_002_000, 0xa00, 1234, 20)
	add(3, 0xa00, 0, 1_003_000, 0xa00, 33)
	add(4, 0xa00, 0, 1_003_500, 0xa00, 33)
	add(5, 0xa00, 0, 1_004_000, 0xffffffffffffffff, 1000)
	add(6, 0xa00, 0, 1_005_000, 0, 5_000_500)
	out := string(gr.flush(nil, time.Now().Add(-time.Hour), false))
	if strings.Count(out, "\n") != 1 {
		t.Fatalf("not one line for the complete block:\n%s", out)
	}
	var blk testkit.GraphBlock
	if err := json.Unmarshal([]byte(out), &blk); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	at := p.boot.Add(time.Millisecond).Format(time.RFC3339Nano)
	if blk.Type != "graph" || blk.Skb != "0xa00" || blk.CPU == nil || *blk.CPU != 0 || blk.Time != at {
		t.Errorf("block header: type %q skb %q cpu %v time %q", blk.Type, blk.Skb, blk.CPU, blk.Time)
	}
	// want is a call as "func depth duration retval data", "-" for none,
	// and the calls inside it.
	type want struct {
		call  string
		calls []want
	}
	var expect func(path string, got []testkit.GraphCall, w []want)
	expect = func(path string, got []testkit.GraphCall, w []want) {
		t.Helper()
		if len(got) != len(w) {
			t.Errorf("%s: %d calls, want %d", path, len(got), len(w))
			return
		}
		for i, c := range got {
			dur, rv := "-", "-"
			if c.DurationNs != nil {
				dur = strconv.FormatUint(*c.DurationNs, 10)
			}
			if c.Retval != nil {
				rv = string(c.Retval)
			}
			data, _ := json.Marshal(c.Data)
			s := strings.Join([]string{c.Func, strconv.Itoa(c.Depth), dur, rv, string(data)}, " ")
			if s != w[i].call {
				t.Errorf("%s call %d: %s, want %s", path, i, s, w[i].call)
			}
			if c.Calls == nil {
				t.Errorf("%s call %d: no calls array", path, i)
			}
			expect(path+"/"+c.Func, c.Calls, w[i].calls)
		}
	}
	expect("cpu 0", blk.Calls, []want{{`ip_rcv 0 5000500 0 {"len":33}`, []want{
		{`ip_rcv_core 1 1234 "0xa00" {"len":20}`, nil},
		{`ip_local_deliver 1 1000 -1 {"len":33}`, []want{
			{`ip_local_deliver_finish 2 - - {"len":33}`, nil},
		}},
	}}})

	add(5, 0xb00, 1, 1_006_000, 0, 2000)
	add(7, 0xb00, 1, 1_007_000, 0, 9000)
	out = string(gr.flush(nil, time.Time{}, true))
	wantLine := `{"calls":[{"calls":[{"calls":[],"data":{"len":61},"depth":1,"duration_ns":2000,"func":"ip_local_deliver","retval":0}],` +
		`"data":{},"depth":0,"duration_ns":9000,"func":"__netif_receive_skb_core","retval":null}],` +
		`"cpu":1,"skb":"0xb00","time":"` + p.boot.Add(1_000_500).Format(time.RFC3339Nano) + `","type":"graph"}` + "\n"
	if out != wantLine {
		t.Errorf("block of a return whose entry was not seen:\n%s\nwant\n%s", out, wantLine)
	}
}
