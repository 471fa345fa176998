package metrics_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skbtrace/skbtrace/check"
	"github.com/skbtrace/skbtrace/codegen"
	"github.com/skbtrace/skbtrace/internal/testkit/compiletest"
	"github.com/skbtrace/skbtrace/runtime/kernel"
	"github.com/skbtrace/skbtrace/runtime/metrics"
	"github.com/skbtrace/skbtrace/runtime/session"
)

// start compiles a script, loads it into the kernel and runs its BEGIN.
func start(tb testing.TB, text string) *session.Session {
	tb.Helper()
	if err := kernel.CheckPrivileges(); err != nil {
		tb.Skipf("loading programs: %v", err)
	}
	_, out := compiletest.Compile(tb, text, check.Options{}, codegen.Options{})
	sess, err := session.Start(out, io.Discard, session.Options{})
	if err != nil {
		tb.Fatalf("start: %v", err)
	}
	tb.Cleanup(sess.Close)
	return sess
}

// warnings collects the collector's warnings.
type warnings struct {
	mu    sync.Mutex
	lines []string
}

func (w *warnings) warn(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, fmt.Sprintf(format, args...))
}

func (w *warnings) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines, "\n")
}

// TestCollectorKinds exports one map of each kind, read from the kernel
// after BEGIN filled them: the types, names, labels and values.
func TestCollectorKinds(t *testing.T) {
	sess := start(t, `BEGIN {
		@drops["a", 1] = count(); @drops["b", 2] = count(); @drops["b", 2] = count();
		@bytes = sum(5); @bytes = sum(7);
		@lat[1] = avg(10); @lat[1] = avg(20);
		@low = min(3); @low = min(-2); @high = max(7);
		@st = stats(4); @st = stats(6);
		@h = hist(5); @h = hist(1000); @h = hist(0);
		@l = lhist(15, 0, 30, 10); @l = lhist(40, 0, 30, 10);
		$port = 53; @v[$port, tcp] = 42;
	}`)
	var w warnings
	c := metrics.NewCollector(metrics.SessionSource(sess), 0, w.warn)
	want := `
# HELP skbtrace_drops_total the script's map @drops
# TYPE skbtrace_drops_total counter
skbtrace_drops_total{key1="a",key2="1"} 1
skbtrace_drops_total{key1="b",key2="2"} 2
# HELP skbtrace_bytes_total the script's map @bytes
# TYPE skbtrace_bytes_total counter
skbtrace_bytes_total 12
# HELP skbtrace_lat the script's map @lat
# TYPE skbtrace_lat gauge
skbtrace_lat{key1="1"} 15
# HELP skbtrace_low the script's map @low
# TYPE skbtrace_low gauge
skbtrace_low -2
# HELP skbtrace_high the script's map @high
# TYPE skbtrace_high gauge
skbtrace_high 7
# HELP skbtrace_st_avg the script's map @st: their average
# TYPE skbtrace_st_avg gauge
skbtrace_st_avg 5
# HELP skbtrace_st_count_total the script's map @st: how many values
# TYPE skbtrace_st_count_total counter
skbtrace_st_count_total 2
# HELP skbtrace_st_sum_total the script's map @st: their sum
# TYPE skbtrace_st_sum_total counter
skbtrace_st_sum_total 10
# HELP skbtrace_h the script's map @h
# TYPE skbtrace_h histogram
skbtrace_h_bucket{le="-1"} 0
skbtrace_h_bucket{le="0"} 1
skbtrace_h_bucket{le="1"} 1
skbtrace_h_bucket{le="3"} 1
skbtrace_h_bucket{le="7"} 2
skbtrace_h_bucket{le="15"} 2
skbtrace_h_bucket{le="31"} 2
skbtrace_h_bucket{le="63"} 2
skbtrace_h_bucket{le="127"} 2
skbtrace_h_bucket{le="255"} 2
skbtrace_h_bucket{le="511"} 2
skbtrace_h_bucket{le="1023"} 3
skbtrace_h_bucket{le="+Inf"} 3
skbtrace_h_sum NaN
skbtrace_h_count 3
# HELP skbtrace_l the script's map @l
# TYPE skbtrace_l histogram
skbtrace_l_bucket{le="-1"} 0
skbtrace_l_bucket{le="9"} 0
skbtrace_l_bucket{le="19"} 1
skbtrace_l_bucket{le="29"} 1
skbtrace_l_bucket{le="+Inf"} 2
skbtrace_l_sum NaN
skbtrace_l_count 2
# HELP skbtrace_v the script's map @v
# TYPE skbtrace_v gauge
skbtrace_v{port="53",tcp="tcp"} 42
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if w.String() != "" {
		t.Errorf("warnings: %s", w.String())
	}
}

// TestCollectorMaxSeries keeps the largest series of a map with more than
// the limit, and says once what it left out.
func TestCollectorMaxSeries(t *testing.T) {
	// Key i counted i times: 1..8.
	var b strings.Builder
	b.WriteString("BEGIN {\n")
	for i := 1; i <= 8; i++ {
		for range i {
			fmt.Fprintf(&b, "@n[%d] = count();\n", i)
		}
	}
	b.WriteString("}")
	sess := start(t, b.String())
	var w warnings
	c := metrics.NewCollector(metrics.SessionSource(sess), 3, w.warn)
	want := `
# HELP skbtrace_n_total the script's map @n
# TYPE skbtrace_n_total counter
skbtrace_n_total{key1="6"} 6
skbtrace_n_total{key1="7"} 7
skbtrace_n_total{key1="8"} 8
`
	for range 2 {
		if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
			t.Error(err)
		}
	}
	if got, want := w.String(), "--metrics: @n has 8 series, more than --metrics-max-series 3: the 5 smallest are left out (this is said once)"; got != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, want)
	}
}

// TestCollectorLeftOut warns once, one line each, of maps that cannot be
// metrics: a stack as a key, strings as values, a name another metric has;
// the others are exported.
func TestCollectorLeftOut(t *testing.T) {
	sess := start(t, `BEGIN { @k[kstack] = count(); @s[1] = "text"; @probes = count(); @ok = count() }`)
	var w warnings
	c := metrics.NewCollector(metrics.SessionSource(sess), 0, w.warn)
	want := `
# HELP skbtrace_ok_total the script's map @ok
# TYPE skbtrace_ok_total counter
skbtrace_ok_total 1
# HELP skbtrace_probes_total the script's map @probes
# TYPE skbtrace_probes_total counter
skbtrace_probes_total 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	wantWarn := "--metrics: @k is left out: its key kstack is a stack, which cannot be a label\n" +
		"--metrics: @s is left out: its values are not numbers"
	if w.String() != wantWarn {
		t.Errorf("warnings:\n%s\nwant:\n%s", w.String(), wantWarn)
	}
}

// TestServe scrapes /metrics over HTTP, in the text format and in
// OpenMetrics, with skbtrace's own metrics beside the script's.
func TestServe(t *testing.T) {
	sess := start(t, `BEGIN { @drops[1] = count(); printf("one\n"); printf("two\n") }`)
	srv, err := metrics.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := metrics.NewCollector(metrics.SessionSource(sess), 0, nil)
	if err := srv.Register(c, metrics.Self{Version: "v9", Backend: "none", Probes: 1, Read: sess.Records,
		Lost: func() uint64 { n, _ := sess.Lost(); return n }}); err != nil {
		t.Fatal(err)
	}
	srv.Serve()
	get := func(accept string) string {
		req, _ := http.NewRequest("GET", "http://"+srv.Addr().String()+"/metrics", nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		return string(b)
	}
	// The printer reads BEGIN's two records on its own time.
	var text string
	for range 100 {
		if text = get(""); strings.Contains(text, "skbtrace_events_read_total 2\n") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, line := range []string{
		`skbtrace_drops_total{key1="1"} 1`,
		`skbtrace_build_info{backend="none",version="v9"} 1`,
		`skbtrace_probes 1`,
		`skbtrace_events_read_total 2`,
		`skbtrace_events_lost_total 0`,
		`# TYPE go_goroutines gauge`,
		`# TYPE process_cpu_seconds_total counter`,
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("no %q in the scrape:\n%s", line, text)
		}
	}
	om := get("application/openmetrics-text; version=1.0.0")
	for _, line := range []string{"# TYPE skbtrace_drops counter", `skbtrace_drops_total{key1="1"} 1.0`, "# EOF"} {
		if !strings.Contains(om, line+"\n") {
			t.Errorf("no %q in the OpenMetrics scrape:\n%s", line, om)
		}
	}
	srv.Close()
	if _, err := http.Get("http://" + srv.Addr().String() + "/metrics"); err == nil {
		t.Error("the server still answers after Close")
	}
}

// TestListenErrors: a bad address and a port in use are one clear line.
func TestListenErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for addr, want := range map[string]string{
		"9464":                   `--metrics takes HOST:PORT or :PORT, such as :9464 or 127.0.0.1:9464, not "9464"`,
		busy.Addr().String():     "--metrics " + busy.Addr().String() + ": the port is in use: stop what listens there or choose another port",
		"192.0.2.1:9464":         "--metrics 192.0.2.1:9464: no interface of this host has that address",
		"127.0.0.1:99999":        "--metrics 127.0.0.1:99999: listen tcp: address 99999: invalid port",
		"no-such-host.invalid:1": `--metrics no-such-host.invalid:1: unknown host "no-such-host.invalid"`,
	} {
		srv, err := metrics.Listen(addr)
		if err == nil {
			srv.Close()
			t.Errorf("Listen(%q) did not fail", addr)
			continue
		}
		if err.Error() != want {
			t.Errorf("Listen(%q): %v\nwant: %s", addr, err, want)
		}
	}
}

// TestRegistryChecks registers the collector in a registry that checks
// descriptions against what is collected.
func TestRegistryChecks(t *testing.T) {
	sess := start(t, `BEGIN { @a[1, "x"] = count(); @h[2] = hist(3) }`)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewCollector(metrics.SessionSource(sess), 0, nil))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 2 {
		t.Errorf("%d families, want 2", len(mfs))
	}
}
