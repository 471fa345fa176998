package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/skbtrace/skbtrace/runtime/metrics"
)

// tenThousand fills a map of 10,000 keys of three parts (a number, a
// string, a number), counted once each, in the kernel.
const tenThousand = `BEGIN { for $i : 0..10000 { @drops[$i, "lo", $i * 7] = count() } }`

// BenchmarkScrape10k is one scrape of a 10,000-key map, as Prometheus
// makes it: read from the kernel, labelled, and written out by promhttp in
// the text format.
func BenchmarkScrape10k(b *testing.B) {
	sess := start(b, tenThousand)
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(metrics.SessionSource(sess), 0, nil))
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 || w.Body.Len() < 10000*30 {
			b.Fatalf("status %d, %d bytes", w.Code, w.Body.Len())
		}
	}
}

// BenchmarkGather10k is the collector's part of a scrape: the map read,
// and its series made metrics (no text written).
func BenchmarkGather10k(b *testing.B) {
	sess := start(b, tenThousand)
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(metrics.SessionSource(sess), 0, nil))
	b.ReportAllocs()
	for b.Loop() {
		mfs, err := reg.Gather()
		if err != nil || len(mfs) != 1 || len(mfs[0].Metric) != 10000 {
			b.Fatalf("%v: %d families", err, len(mfs))
		}
	}
}

// BenchmarkPrint10k prints the same map as skbtrace does at exit.
func BenchmarkPrint10k(b *testing.B) {
	sess := start(b, tenThousand)
	b.ReportAllocs()
	for b.Loop() {
		if err := sess.PrintMaps(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
