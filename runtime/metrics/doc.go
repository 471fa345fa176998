// Package metrics serves a running script's maps to Prometheus: a
// prometheus.Collector reads them from the kernel at each scrape (never per
// event) and exports count() and sum() as counters, hist() and lhist() as
// histograms with the maps' buckets as their bounds, avg(), min(), max()
// and plain integer values as gauges, stats() as a count, a sum and an
// average; each key part is a label named after its expression. Beside
// them it exports skbtrace's own: the records read and lost, the probes
// attached, the version and backend, what was missed (session.Misses,
// misses.go), and the Go process's.
//
// Maps reach the collector through Source, which the session provides;
// Listen opens the address before anything attaches, Serve serves
// /metrics with promhttp. With a web configuration file in the Prometheus
// exporter-toolkit's format (LoadWebConfig, ListenWeb: TLS, client
// certificates, bcrypt basic auth users, as node_exporter's
// --web.config.file), the toolkit serves it.
package metrics
