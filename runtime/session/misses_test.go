package session

import (
	"reflect"
	"testing"
)

// TestMissesAdd sums entries of one kind, probe and reason, keeps an
// uncounted kind apart from a counted one, and orders the entries by kind
// (the session's kinds first, then others by name), probe and reason.
func TestMissesAdd(t *testing.T) {
	var m Misses
	m.Add(Miss{What: "packets_sampled_out", Probe: "skb:*", Count: 5})
	m.Add(Miss{What: MissFunctionsSkipped, Reason: "busy", Count: 1, Detail: []string{"a"}})
	m.Add(Miss{What: MissProgramsSkipped, Probe: "kprobe:b", Reason: reasonActive, Count: 2})
	m.Add(Miss{What: MissProgramsSkipped, Probe: "kprobe:a", Reason: reasonActive, Count: 3})
	m.Add(Miss{What: MissFunctionsSkipped, Reason: "busy", Count: 1, Detail: []string{"b"}})
	m.Add(Miss{What: MissProgramsSkipped, Reason: "not here", Uncounted: true})
	var o Misses
	o.Add(Miss{What: MissProgramsSkipped, Probe: "kprobe:a", Reason: reasonActive, Count: 4})
	o.Add(Miss{What: "events_capped", Probe: "skb:*", Count: 1})
	m.Merge(&o)
	m.Merge(nil)
	want := []Miss{
		{What: MissProgramsSkipped, Reason: "not here", Uncounted: true},
		{What: MissProgramsSkipped, Probe: "kprobe:a", Reason: reasonActive, Count: 7},
		{What: MissProgramsSkipped, Probe: "kprobe:b", Reason: reasonActive, Count: 2},
		{What: MissFunctionsSkipped, Reason: "busy", Count: 2, Detail: []string{"a", "b"}},
		{What: "events_capped", Probe: "skb:*", Count: 1},
		{What: "packets_sampled_out", Probe: "skb:*", Count: 5},
	}
	if got := m.Entries(); !reflect.DeepEqual(got, want) {
		t.Errorf("entries:\n%+v\nwant:\n%+v", got, want)
	}
	if n := m.Total(MissProgramsSkipped); n != 9 {
		t.Errorf("programs skipped total %d, want 9", n)
	}
	if !m.Any() {
		t.Error("Any is false")
	}
	var none Misses
	none.Add(Miss{What: MissProgramsSkipped, Reason: "not here", Uncounted: true})
	none.Add(Miss{What: MissEventsLost, Count: 0})
	if none.Any() {
		t.Error("Any is true of an uncounted entry and a zero")
	}
}

func TestAtLeast(t *testing.T) {
	for _, c := range []struct {
		rel, v [2]int
		want   bool
	}{
		{[2]int{5, 10}, countsTrampoline, false},
		{[2]int{5, 12}, countsTrampoline, true},
		{[2]int{5, 10}, countsRawTp, false},
		{[2]int{6, 1}, countsRawTp, true},
		{[2]int{6, 1}, countsOthers, false},
		{[2]int{6, 12}, countsOthers, true},
		{[2]int{7, 0}, countsOthers, true},
		{[2]int{}, countsOthers, true},
	} {
		if got := atLeast(c.rel, c.v); got != c.want {
			t.Errorf("atLeast(%v, %v) = %v", c.rel, c.v, got)
		}
	}
}
