package metrics

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultMaxSeries is how many series of one map the collector exports
// unless told otherwise (--metrics-max-series): the largest ones.
const DefaultMaxSeries = 10000

// Collector exports a script's maps: each scrape reads them from the
// kernel through a Source.
type Collector struct {
	src       Source
	maxSeries int
	warn      func(format string, args ...any)
	maps      []exported
	// mu guards warned: scrapes may run at once.
	mu     sync.Mutex
	warned map[string]bool
}

// exported is a map with the descriptions of its metrics.
type exported struct {
	Map
	desc *prometheus.Desc
	// count, sum and avg are stats()'s three.
	count, sum *prometheus.Desc
}

// reserved are the names of the collector's neighbours, which no map takes.
var reserved = map[string]bool{
	Namespace + "_build_info": true, Namespace + "_events_read_total": true,
	Namespace + "_events_lost_total": true, Namespace + "_probes": true,
}

// NewCollector describes the source's maps as metrics. A map that cannot
// be one (a stack as a key, a string as a value), or whose name another
// metric has, is left out, and warn says so once, one line.
func NewCollector(src Source, maxSeries int, warn func(format string, args ...any)) *Collector {
	if maxSeries <= 0 {
		maxSeries = DefaultMaxSeries
	}
	if warn == nil {
		warn = func(string, ...any) {}
	}
	c := &Collector{src: src, maxSeries: maxSeries, warn: warn, warned: map[string]bool{}}
	taken := maps.Clone(reserved)
	for _, m := range src.Maps() {
		if m.Kind == Skip {
			warn("--metrics: @%s is left out: %s", m.Name, m.Why)
			continue
		}
		labels := labelNames(m.Keys, m.Kind == Histogram)
		help := fmt.Sprintf("the script's map @%s", m.Name)
		e := exported{Map: m}
		var names []string
		switch m.Kind {
		case Counter:
			names = []string{metricName(m.Name, "_total")}
			e.desc = prometheus.NewDesc(names[0], help, labels, nil)
		case Gauge, Histogram:
			names = []string{metricName(m.Name, "")}
			e.desc = prometheus.NewDesc(names[0], help, labels, nil)
		case Stats:
			names = []string{metricName(m.Name, "_count_total"), metricName(m.Name, "_sum_total"), metricName(m.Name, "_avg")}
			e.count = prometheus.NewDesc(names[0], help+": how many values", labels, nil)
			e.sum = prometheus.NewDesc(names[1], help+": their sum", labels, nil)
			e.desc = prometheus.NewDesc(names[2], help+": their average", labels, nil)
		}
		if n := slices.IndexFunc(names, func(n string) bool { return taken[n] }); n >= 0 {
			warn("--metrics: @%s is left out: %s is another metric's name", m.Name, names[n])
			continue
		}
		for _, n := range names {
			taken[n] = true
		}
		c.maps = append(c.maps, e)
	}
	return c
}

// Describe sends the maps' descriptions.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, e := range c.maps {
		ch <- e.desc
		if e.count != nil {
			ch <- e.count
			ch <- e.sum
		}
	}
}

// Collect reads every map from the kernel and sends its series.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, e := range c.maps {
		series, err := c.src.Read(e.Map)
		if err != nil {
			c.once("read "+e.Name, "--metrics: %v", err)
			ch <- prometheus.NewInvalidMetric(e.desc, err)
			continue
		}
		series = c.largest(e.Map, series)
		switch e.Kind {
		case Counter, Gauge:
			vt := prometheus.GaugeValue
			if e.Kind == Counter {
				vt = prometheus.CounterValue
			}
			for _, s := range series {
				ch <- prometheus.MustNewConstMetric(e.desc, vt, s.Value, s.Labels...)
			}
		case Stats:
			for _, s := range series {
				ch <- prometheus.MustNewConstMetric(e.count, prometheus.CounterValue, float64(s.Count), s.Labels...)
				ch <- prometheus.MustNewConstMetric(e.sum, prometheus.CounterValue, s.Sum, s.Labels...)
				ch <- prometheus.MustNewConstMetric(e.desc, prometheus.GaugeValue, s.Value, s.Labels...)
			}
		case Histogram:
			c.histograms(ch, e, series)
		}
	}
}

// histograms sends a histogram map's series, each with the buckets from
// the first up to the highest any series of the map has used (the last,
// +Inf, is the count), cumulative. The maps keep no sum: it is NaN.
func (c *Collector) histograms(ch chan<- prometheus.Metric, e exported, series []Series) {
	top := 0
	for _, s := range series {
		for i := range s.Buckets {
			top = max(top, i)
		}
	}
	top = min(top, len(e.Bounds)-1)
	for _, s := range series {
		buckets := make(map[float64]uint64, top+1)
		var total, cum uint64
		for _, n := range s.Buckets {
			total += n
		}
		for i := 0; i <= top; i++ {
			cum += s.Buckets[i]
			if b := e.Bounds[i]; !math.IsInf(b, 1) {
				buckets[b] = cum
			}
		}
		ch <- prometheus.MustNewConstHistogram(e.desc, total, math.NaN(), buckets, s.Labels...)
	}
}

// largest keeps the maxSeries series of m with the largest values (counts,
// for histograms and stats), and says once what it left out.
func (c *Collector) largest(m Map, series []Series) []Series {
	if len(series) <= c.maxSeries {
		return series
	}
	slices.SortFunc(series, func(a, b Series) int { return cmp.Compare(b.weight(), a.weight()) })
	c.once("max "+m.Name, "--metrics: @%s has %d series, more than --metrics-max-series %d: the %d smallest are left out (this is said once)",
		m.Name, len(series), c.maxSeries, len(series)-c.maxSeries)
	return series[:c.maxSeries]
}

// once warns the first time key comes.
func (c *Collector) once(key, format string, args ...any) {
	c.mu.Lock()
	first := !c.warned[key]
	c.warned[key] = true
	c.mu.Unlock()
	if first {
		c.warn(format, args...)
	}
}
