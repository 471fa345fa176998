package metrics

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skbtrace/skbtrace/runtime/session"
)

// TestSelfMisses exports each kind of miss as skbtrace_<what>_total by
// probe and reason, leaves out records lost (skbtrace_events_lost_total
// has them) and what the kernel does not count, and sums the series past
// maxMissSeries of a kind in probe="other".
func TestSelfMisses(t *testing.T) {
	m := &session.Misses{}
	m.Add(session.Miss{What: session.MissProgramsSkipped, Probe: "kprobe:x", Reason: "r", Count: 3})
	m.Add(session.Miss{What: session.MissProgramsSkipped, Reason: "not here", Uncounted: true})
	m.Add(session.Miss{What: session.MissEventsLost, Reason: "the ring buffer was full", Count: 9})
	m.Add(session.Miss{What: session.MissCapturesTruncated, Reason: "longer than the snap length", Count: 2})
	for i := range maxMissSeries + 2 {
		m.Add(session.Miss{What: "events_capped", Probe: fmt.Sprintf("p%03d", i), Count: 1})
	}
	c := newSelfCollector(Self{Version: "v", Backend: "b", Misses: func() *session.Misses { return m }})
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	want := `# HELP skbtrace_captures_truncated_total frames -w cut to the snap length
# TYPE skbtrace_captures_truncated_total counter
skbtrace_captures_truncated_total{probe="",reason="longer than the snap length"} 2
# HELP skbtrace_programs_skipped_total runs of a probe's program the kernel skipped (recursion, kprobe misses), where the kernel counts them
# TYPE skbtrace_programs_skipped_total counter
skbtrace_programs_skipped_total{probe="kprobe:x",reason="r"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "skbtrace_programs_skipped_total", "skbtrace_captures_truncated_total", "skbtrace_events_lost_total"); err != nil {
		t.Error(err)
	}
	n, err := testutil.GatherAndCount(reg, "skbtrace_events_capped_total")
	if err != nil || n != maxMissSeries {
		t.Errorf("%d events_capped series (%v), want %d", n, err, maxMissSeries)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var other float64
	for _, f := range fams {
		if f.GetName() != "skbtrace_events_capped_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "probe" && l.GetValue() == "other" {
					other += s.GetCounter().GetValue()
				}
			}
		}
	}
	// 66 probes: 63 series of their own, the other 3 summed.
	if other != 3 {
		t.Errorf(`events_capped{probe="other"} = %v, want 3`, other)
	}
}
