package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/skbtrace/skbtrace/runtime/session"
)

// Self is what skbtrace says of itself beside the script's maps.
type Self struct {
	// Version is skbtrace's; Backend how skb: probes attach to kernel
	// functions (kprobe-multi, kprobe, fentry), or none.
	Version, Backend string
	// Probes is how many probes are attached: tracing N probes.
	Probes int
	// Read and Lost count the records read from the event buffer and
	// those the programs found no room for, each as the session keeps
	// them exactly.
	Read, Lost func() uint64
	// Misses reads what skbtrace did not see (session.Misses): each kind
	// a counter skbtrace_<what>_total by probe and reason (misses.go).
	Misses func() *session.Misses
}

// selfCollector exports Self.
type selfCollector struct {
	s                        Self
	info, probes, read, lost *prometheus.Desc
	misses                   missDescs
}

func newSelfCollector(s Self) *selfCollector {
	return &selfCollector{s: s,
		info:   prometheus.NewDesc(Namespace+"_build_info", "skbtrace's version and the backend its skb: probes use", []string{"version", "backend"}, nil),
		probes: prometheus.NewDesc(Namespace+"_probes", "the probes attached", nil, nil),
		read:   prometheus.NewDesc(Namespace+"_events_read_total", "records read from the event buffer: print, printf and the like", nil, nil),
		lost:   prometheus.NewDesc(Namespace+"_events_lost_total", "records lost: the event buffer was full", nil, nil),
	}
}

func (c *selfCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.info
	ch <- c.probes
	ch <- c.read
	ch <- c.lost
}

func (c *selfCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1, c.s.Version, c.s.Backend)
	ch <- prometheus.MustNewConstMetric(c.probes, prometheus.GaugeValue, float64(c.s.Probes))
	if c.s.Read != nil {
		ch <- prometheus.MustNewConstMetric(c.read, prometheus.CounterValue, float64(c.s.Read()))
	}
	if c.s.Lost != nil {
		ch <- prometheus.MustNewConstMetric(c.lost, prometheus.CounterValue, float64(c.s.Lost()))
	}
	if c.s.Misses != nil {
		c.misses.collectMisses(c.s.Misses(), ch)
	}
}
