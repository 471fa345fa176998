package rules

import (
	"encoding/binary"
	"testing"
	"time"
)

// tcFilterMsg is an RTM_NEWTFILTER's body as the kernel sends it: a u32
// filter (pref 30, protocol ip, handle 800::800) on ifindex 2, with one
// action of kind whose parameters (attribute parmsAttr) are parms, and its
// packets, drops and overlimits.
func tcFilterMsg(kind string, parmsAttr uint16, parms []byte, packets, drops, overlimits uint32) []byte {
	b := tcmsgOf(2, 0x80000800, tcHIngress, 30<<16|0x0008)
	b = append(b, attrStr(tcaKind, "u32")...)
	b = append(b, attr(tcaChain, binary.LittleEndian.AppendUint32(nil, 0))...)
	basic := binary.LittleEndian.AppendUint64(nil, 100)
	basic = binary.LittleEndian.AppendUint32(basic, packets)
	queue := make([]byte, 20)
	binary.LittleEndian.PutUint32(queue[8:], drops)
	binary.LittleEndian.PutUint32(queue[16:], overlimits)
	act := nested(1,
		attrStr(tcaActKind, kind),
		nested(tcaActOptions, attr(parmsAttr, parms)),
		nested(tcaActStats, attr(tcaStatsBasic, basic), attr(tcaStatsQueue, queue)))
	return append(b, nested(tcaOptions, nested(tcActsAttr["u32"], act))...)
}

// tcGen is struct tc_gen with control action ctl, then extra.
func tcGen(ctl int32, extra ...uint32) []byte {
	b := make([]byte, 20)
	binary.LittleEndian.PutUint32(b[8:], uint32(ctl))
	for _, v := range extra {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}

// tcPolice is struct tc_police: exceed action ctl, rate in bytes a
// second, burst in 64 ns ticks.
func tcPolice(ctl int32, rate, ticks uint32) []byte {
	b := make([]byte, 56)
	binary.LittleEndian.PutUint32(b[4:], uint32(ctl))
	binary.LittleEndian.PutUint32(b[12:], ticks)
	binary.LittleEndian.PutUint32(b[28:], rate)
	return b
}

// TestTCFilterActions: each action kind's text as tc prints it, and the
// counter its drops are told by.
func TestTCFilterActions(t *testing.T) {
	names := map[int32]netDev{2: {"v2", true}, 5: {"x1", true}, 6: {"x2", false}}
	for _, c := range []struct {
		name string
		msg  []byte
		text string
		drop uint64
	}{
		{"gact drop", tcFilterMsg("gact", 2, tcGen(2), 7, 7, 0), "gact drop", 7},
		{"gact pass", tcFilterMsg("gact", 2, tcGen(0), 7, 0, 0), "gact pass", 0},
		// A redirect to a device that is down: overlimits, the packet dropped.
		{"mirred down", tcFilterMsg("mirred", 2, tcGen(4, 1, 5), 3, 0, 3), "mirred (egress redirect to device x1) stolen", 3},
		{"mirred down now", tcFilterMsg("mirred", 2, tcGen(4, 1, 6), 3, 0, 3), "mirred (egress redirect to device x2) stolen; x2 is down", 3},
		// To a device that is gone (ifindex 0): overlimits, the packet taken.
		{"mirred gone", tcFilterMsg("mirred", 2, tcGen(4, 1, 0), 3, 0, 3), "mirred (egress redirect to device *) stolen", 0},
		{"mirror pipe", tcFilterMsg("mirred", 2, tcGen(3, 4, 5), 3, 0, 3), "mirred (ingress mirror to device x1) pipe", 0},
		{"mirror drop", tcFilterMsg("mirred", 2, tcGen(2, 2, 5), 4, 0, 0), "mirred (egress mirror to device x1) drop", 4},
		// 8kbit (1000 bytes a second), a burst of 1024 bytes: 1.024 s.
		{"police", tcFilterMsg("police", tcaPoliceTbf, tcPolice(2, 1000, 16000000), 9, 6, 6), "police rate 8Kbit burst 1Kb drop", 6},
		{"skbedit drop", tcFilterMsg("skbedit", 2, tcGen(2), 5, 0, 0), "skbedit drop", 5},
		{"goto chain", tcFilterMsg("gact", 2, tcGen(2<<28|3), 5, 0, 0), "gact goto chain 3", 0},
	} {
		acts := parseTCFilter(c.msg, "v2", "ingress", "clsact", names, time.Now())
		if len(acts) != 1 {
			t.Errorf("%s: %d actions", c.name, len(acts))
			continue
		}
		a := acts[0]
		if a.action != c.text || a.drops != c.drop || a.handle != "800::800" || a.pref != 30 || a.protocol != "ip" || a.kind != "u32" || a.order != 1 {
			t.Errorf("%s: %+v, want %q dropping %d", c.name, a, c.text, c.drop)
		}
	}
	if acts := parseTCFilter([]byte{1, 2, 3}, "v2", "ingress", "clsact", names, time.Now()); acts != nil {
		t.Errorf("a short message read as %+v", acts)
	}
}

// TestTCActionCredits: an action is named once for each drop its counter
// rose by since the last read, and never where none rose; in a namespace
// read at start, an action seen later counts from zero.
func TestTCActionCredits(t *testing.T) {
	var tc tcActs
	read := func(drops uint32) []tcAction {
		return parseTCFilter(tcFilterMsg("gact", 2, tcGen(2), drops, drops, 0), "v2", "ingress", "clsact", nil, time.Now())
	}
	tc.update("1", read(3)) // the first read: counts, no credit
	if _, n := tc.credited("1", "v2", "ingress", read(3)); n != 0 {
		t.Fatalf("%d actions credited with no drop since", n)
	}
	// Two drops since: named twice, then no more.
	for i := 0; i < 2; i++ {
		a, n := tc.credited("1", "v2", "ingress", read(5))
		if n != 1 || a.action != "gact drop" || a.dev != "v2" || a.qdisc != "clsact" {
			t.Fatalf("drop %d: %d actions credited (%+v)", i, n, a)
		}
	}
	if _, n := tc.credited("1", "v2", "ingress", read(5)); n != 0 {
		t.Fatalf("a third drop named with two counted")
	}
	// Another hook's drop does not take this one's credit.
	if _, n := tc.credited("1", "v2", "egress", read(6)); n != 0 {
		t.Fatalf("an ingress action named for an egress drop")
	}
	if _, n := tc.credited("1", "v2", "ingress", read(6)); n != 1 {
		t.Fatalf("the ingress drop lost its credit")
	}
	// A namespace read at start: an action first seen later counts from 0.
	tc.started = map[string]bool{"2": true}
	if a, n := tc.credited("2", "v2", "ingress", read(1)); n != 1 || a.action != "gact drop" {
		t.Fatalf("a new action's first drop: %d credited", n)
	}
}

// TestTCFormats: rates, sizes and handles as tc prints them.
func TestTCFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{tcRate(1000), "8Kbit"},
		{tcRate(125000), "1Mbit"},
		{tcRate(125), "1Kbit"},
		{tcRate(100), "800bit"},
		{tcRate(1100), "8800bit"},
		{tcSize(1024), "1Kb"},
		{tcSize(1500), "1500b"},
		{tcSize(10 << 20), "10Mb"},
		{tcHandle("u32", 0x80000800), "800::800"},
		{tcHandle("u32", 0x80000000), "800:"},
		{tcHandle("flower", 1), "0x1"},
		{ethProto(0x0008), "ip"},
		{ethProto(0x0300), "all"},
		{ethProto(0xdd86), "ipv6"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// TestTCActionsInOrder: two actions of one hook with drops not yet named
// are told apart where every use of one came before any of the other's
// (the kernel's first and last use): the earlier's drops are named first,
// then the later's; where their uses overlap, neither is named.
func TestTCActionsInOrder(t *testing.T) {
	now := time.Now()
	// struct tcf_t (TCA_GACT_TM): install, lastuse, expires, firstuse, in
	// 10 ms ticks before the read.
	tcfT := func(last, first uint64) []byte {
		tm := make([]byte, 32)
		binary.LittleEndian.PutUint64(tm[8:], last)
		binary.LittleEndian.PutUint64(tm[24:], first)
		return tm
	}
	tmA, tmB := tcfT(200, 201), tcfT(50, 52) // A used 2 s ago, B 0.5 s ago
	build := func(pref uint32, tm []byte, drops uint32) []byte {
		b := tcmsgOf(2, 0x80000800+pref, tcHIngress, pref<<16|0x0008)
		b = append(b, attrStr(tcaKind, "u32")...)
		queue := make([]byte, 20)
		binary.LittleEndian.PutUint32(queue[8:], drops)
		act := nested(1,
			attrStr(tcaActKind, "gact"),
			nested(tcaActOptions, attr(1, tm), attr(2, tcGen(2))),
			nested(tcaActStats, attr(tcaStatsQueue, queue)))
		return append(b, nested(tcaOptions, nested(tcActsAttr["u32"], act))...)
	}
	read := func(a, b uint32, tmB []byte) []tcAction {
		return append(parseTCFilter(build(10, tmA, a), "v2", "ingress", "clsact", nil, now),
			parseTCFilter(build(20, tmB, b), "v2", "ingress", "clsact", nil, now)...)
	}
	acts := read(0, 0, tmB)
	if got := acts[0].last; got.Sub(now.Add(-2*time.Second)).Abs() > time.Millisecond || acts[0].first.After(acts[0].last) {
		t.Fatalf("A's uses read as %v, %v (now %v)", acts[0].first, acts[0].last, now)
	}
	var tc tcActs
	tc.update("1", acts)
	// A dropped two, then B two, before the first block was printed.
	for i, want := range []int{10, 10, 20, 20} {
		a, n := tc.credited("1", "v2", "ingress", read(2, 2, tmB))
		if n != 1 || a.pref != want {
			t.Fatalf("drop %d: %d credited, pref %d, want %d", i, n, a.pref, want)
		}
	}
	// Uses that overlap (B first used before A's last): not told apart.
	tc = tcActs{}
	tc.update("1", read(2, 2, tmB))
	if _, n := tc.credited("1", "v2", "ingress", read(3, 3, tcfT(50, 300))); n != 2 {
		t.Fatalf("overlapping uses: %d credited, want 2 (which)", n)
	}
}
