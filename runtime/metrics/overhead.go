package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/skbtrace/skbtrace/runtime/session"
)

// Overhead is what skbtrace's cost and --sample export: its CPU time is
// the process collector's process_cpu_seconds_total.
type Overhead struct {
	// ProgramTime reads the programs' run time, nil where the kernel does
	// not count it (BPF stats off).
	ProgramTime func() session.ProgramTime
	// Gates reads --sample's and --max-rate's counts (Session.Overhead);
	// what they left out is in the misses' counters (sampled_out, capped).
	Gates func() (session.Overhead, error)
}

// RegisterOverhead adds skbtrace_program_run_seconds_total and
// skbtrace_program_runs_total, and with --sample the skbs kept and left
// out and its one in N now.
func (s *Server) RegisterOverhead(o Overhead) error {
	return s.reg.Register(gated{newOverheadCollector(o), s})
}

type overheadCollector struct {
	o                                     Overhead
	run, runs, kept, skipped, sampleOneIn *prometheus.Desc
}

func newOverheadCollector(o Overhead) *overheadCollector {
	return &overheadCollector{o: o,
		run:         prometheus.NewDesc(Namespace+"_program_run_seconds_total", "time skbtrace's BPF programs ran (bpf_prog_info run_time_ns, BPF stats on for the run)", nil, nil),
		runs:        prometheus.NewDesc(Namespace+"_program_runs_total", "runs of skbtrace's BPF programs (bpf_prog_info run_cnt)", nil, nil),
		kept:        prometheus.NewDesc(Namespace+"_sample_kept_packets_total", "skbs --sample kept, every hop of them", nil, nil),
		skipped:     prometheus.NewDesc(Namespace+"_sample_skipped_packets_total", "skbs --sample left out, every hop of them", nil, nil),
		sampleOneIn: prometheus.NewDesc(Namespace+"_sample_one_in", "--sample's N now: one new skb in N is kept (--max-overhead raises it)", nil, nil),
	}
}

func (c *overheadCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.run, c.runs, c.kept, c.skipped, c.sampleOneIn} {
		ch <- d
	}
}

func (c *overheadCollector) Collect(ch chan<- prometheus.Metric) {
	if c.o.ProgramTime != nil {
		pt := c.o.ProgramTime()
		ch <- prometheus.MustNewConstMetric(c.run, prometheus.CounterValue, pt.Run.Seconds())
		ch <- prometheus.MustNewConstMetric(c.runs, prometheus.CounterValue, float64(pt.Runs))
	}
	if c.o.Gates == nil {
		return
	}
	if ov, err := c.o.Gates(); err == nil && ov.Sampling {
		ch <- prometheus.MustNewConstMetric(c.kept, prometheus.CounterValue, float64(ov.KeptPackets))
		ch <- prometheus.MustNewConstMetric(c.skipped, prometheus.CounterValue, float64(ov.SampledPackets))
		ch <- prometheus.MustNewConstMetric(c.sampleOneIn, prometheus.GaugeValue, float64(ov.SampleN))
	}
}
