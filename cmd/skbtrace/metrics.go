package main

import (
	"fmt"
	"io"

	"github.com/skbtrace/skbtrace/runtime/metrics"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// listenMetrics reads --web.config.file and opens --metrics' address
// before anything loads, so that a bad file, a bad address or a port in
// use ends skbtrace at once. Nil without the flag.
func listenMetrics(o options, stderr io.Writer) (*metrics.Server, error) {
	if o.metrics == "" {
		if o.webConfig != "" {
			return nil, fmt.Errorf("--web.config.file secures --metrics' scrapes: give --metrics ADDR too")
		}
		return nil, nil
	}
	if o.metricsMaxSeries <= 0 {
		return nil, fmt.Errorf("--metrics-max-series takes a positive number of series, not %d", o.metricsMaxSeries)
	}
	var wc *metrics.WebConfig
	if o.webConfig != "" {
		var err error
		if wc, err = metrics.LoadWebConfig(o.webConfig); err != nil {
			return nil, err
		}
	}
	warn := func(format string, args ...any) { fmt.Fprintf(stderr, "skbtrace: "+format+"\n", args...) }
	return metrics.ListenWeb(o.metrics, wc, warn)
}

// serveMetrics serves the session's maps and counts on srv while tracing.
// probes is what "tracing N probes" says.
func serveMetrics(srv *metrics.Server, o options, sess *session.Session, probes int, stderr io.Writer) error {
	backend := "none"
	if st := sess.FuncStats(); st != nil {
		backend = string(st.Backend)
	}
	warn := func(format string, args ...any) { fmt.Fprintf(stderr, "skbtrace: "+format+"\n", args...) }
	c := metrics.NewCollector(metrics.SessionSource(sess), o.metricsMaxSeries, warn)
	err := srv.Register(c, metrics.Self{Version: version, Backend: backend, Probes: probes,
		Read: sess.Records, Lost: func() uint64 { n, _ := sess.Lost(); return n }, Misses: sess.Misses})
	if err != nil {
		return fmt.Errorf("--metrics: %w", err)
	}
	srv.Serve()
	if o.webConfig == "" {
		fmt.Fprintf(stderr, "skbtrace: serving metrics on %s\n", srv.URL())
	} else {
		fmt.Fprintf(stderr, "skbtrace: serving metrics on %s (%s)\n", srv.URL(), srv.Describe())
	}
	return nil
}
