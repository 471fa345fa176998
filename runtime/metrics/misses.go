package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skbtrace/skbtrace/runtime/session"
)

// maxMissSeries bounds the series of each kind of miss: one for each probe
// and reason up to it, the others summed in probe="other", reason="other".
// A script's probes and the kernel's reasons are few; functions are never
// labels (a function skipped is counted under its reason).
const maxMissSeries = 64

// missDescs are the descriptors of the kinds of misses, one a counter
// skbtrace_<what>_total, made as a kind is first seen.
type missDescs struct {
	mu    sync.Mutex
	descs map[string]*prometheus.Desc
}

// missHelp says what each kind counts; a kind another part adds is
// described by its name.
var missHelp = map[string]string{
	session.MissProgramsSkipped:   "runs of a probe's program the kernel skipped (recursion, kprobe misses), where the kernel counts them",
	session.MissFunctionsSkipped:  "functions a probe matched that did not attach, by reason",
	session.MissCapturesTruncated: "frames -w cut to the snap length",
}

func (d *missDescs) desc(what string) *prometheus.Desc {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.descs == nil {
		d.descs = map[string]*prometheus.Desc{}
	}
	if c, ok := d.descs[what]; ok {
		return c
	}
	help := missHelp[what]
	if help == "" {
		help = "skbtrace's count of " + what
	}
	c := prometheus.NewDesc(Namespace+"_"+what+"_total", help, []string{"probe", "reason"}, nil)
	d.descs[what] = c
	return c
}

// collectMisses sends each kind of miss counted as a counter with the
// probe and the reason as labels, at most maxMissSeries of a kind. Records
// lost are skbtrace_events_lost_total, without labels (Self.Lost); a
// kind this kernel does not count is not sent.
func (d *missDescs) collectMisses(m *session.Misses, ch chan<- prometheus.Metric) {
	type series struct{ probe, reason string }
	counts := map[string]map[series]uint64{}
	var order []string
	for _, e := range m.Entries() {
		if e.Uncounted || e.What == session.MissEventsLost {
			continue
		}
		byWhat := counts[e.What]
		if byWhat == nil {
			byWhat = map[series]uint64{}
			counts[e.What] = byWhat
			order = append(order, e.What)
		}
		k := series{e.Probe, e.Reason}
		if _, ok := byWhat[k]; !ok && len(byWhat) >= maxMissSeries-1 {
			k = series{"other", "other"}
		}
		byWhat[k] += e.Count
	}
	for _, what := range order {
		c := d.desc(what)
		for k, n := range counts[what] {
			ch <- prometheus.MustNewConstMetric(c, prometheus.CounterValue, float64(n), k.probe, k.reason)
		}
	}
}
