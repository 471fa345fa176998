package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/scripts"
)

// freePort is a loopback address with a port nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// netnsWithLo makes a network namespace with lo up, removed at the end,
// and returns its inode number.
func netnsWithLo(t *testing.T, name string) uint64 {
	t.Helper()
	exec.Command("ip", "netns", "del", name).Run()
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	for _, c := range [][]string{{"ip", "netns", "add", name}, {"ip", "-n", name, "link", "set", "lo", "up"}} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", c, err, out)
		}
	}
	out, err := exec.Command("ip", "netns", "exec", name, "stat", "-L", "-c", "%i", "/proc/self/ns/net").Output()
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// startCLI runs skbtrace with args as a child process until the test ends
// (SIGTERM, then SIGKILL after 10 s), once it says it is tracing; its
// stdout goes to the returned function's result at the end.
func startCLI(t *testing.T, args ...string) (stdout func() string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "SKBTRACE_ARGS="+strings.Join(args, "\x1f"))
	var out strings.Builder
	cmd.Stdout = &out
	errs, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var stderr strings.Builder
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(errs)
		said := false
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			if !said && strings.HasPrefix(sc.Text(), "skbtrace: tracing ") {
				said = true
				ready <- true
			}
		}
		if !said {
			ready <- false
		}
		done <- cmd.Wait()
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	t.Cleanup(stop)
	select {
	case ok := <-ready:
		if !ok {
			stop()
			t.Fatalf("skbtrace %q ended before tracing:\n%s", args, stderr.String())
		}
	case <-time.After(60 * time.Second):
		stop()
		t.Fatalf("skbtrace %q is not tracing after 60 s:\n%s", args, stderr.String())
	}
	return func() string { stop(); return out.String() }
}

// prometheus is a Prometheus server the test started.
type prometheus struct {
	t    *testing.T
	base string
}

// startPrometheus starts Debian's prometheus on loopback, scraping each
// target every second with its node label; it is killed when the test ends.
func startPrometheus(t *testing.T, targets map[string]string) *prometheus {
	t.Helper()
	var cfg strings.Builder
	cfg.WriteString("  - job_name: skbtrace\n    static_configs:\n")
	nodes := make([]string, 0, len(targets))
	for n := range targets {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		fmt.Fprintf(&cfg, "      - targets: [%q]\n        labels: {node: %q}\n", targets[n], n)
	}
	return startPrometheusJobs(t, cfg.String())
}

// startPrometheusJobs starts Debian's prometheus on loopback with these
// scrape_configs (YAML list items, indented by two), scraping every
// second; it is killed when the test ends.
func startPrometheusJobs(t *testing.T, scrapeConfigs string) *prometheus {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skipf("no prometheus binary (apt-get install prometheus): %v", err)
	}
	dir := t.TempDir()
	cfg := "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n" + scrapeConfigs
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr, "--log.level=warn")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel() // kills it
		cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus:\n%s", logs.String())
		}
	})
	p := &prometheus{t: t, base: "http://" + addr}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := http.Get(p.base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus is not ready after 30 s:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sample is one element of an instant vector.
type sample struct {
	Metric map[string]string
	Value  [2]any
}

func (s sample) value() float64 {
	v, _ := strconv.ParseFloat(fmt.Sprint(s.Value[1]), 64)
	return v
}

// query evaluates PromQL through the HTTP API (at time at, unless zero).
func (p *prometheus) query(q string, at float64) []sample {
	p.t.Helper()
	form := url.Values{"query": {q}}
	if at != 0 {
		form.Set("time", strconv.FormatFloat(at, 'f', 3, 64))
	}
	resp, err := http.PostForm(p.base+"/api/v1/query", form)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status string
		Error  string
		Data   struct {
			ResultType string
			Result     json.RawMessage
		}
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		p.t.Fatalf("query %s: %v %s: %s", q, err, r.Error, body)
	}
	var out []sample
	if r.Data.ResultType == "vector" {
		if err := json.Unmarshal(r.Data.Result, &out); err != nil {
			p.t.Fatal(err)
		}
	}
	return out
}

// byLabels renders a vector as "label=value,...: number" lines, sorted.
func byLabels(v []sample, labels ...string) string {
	var lines []string
	for _, s := range v {
		var parts []string
		for _, l := range labels {
			parts = append(parts, l+"="+s.Metric[l])
		}
		lines = append(lines, fmt.Sprintf("%s: %g", strings.Join(parts, ","), s.value()))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// waitQuery evaluates q until it gives want (byLabels' text), 30 s at most.
func (p *prometheus) waitQuery(q, want string, labels ...string) {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := byLabels(p.query(q, 0), labels...)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s after 30 s:\n%s\nwant:\n%s", q, got, want)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// inNetns runs a bash command in namespace ns, bounded to 20 s.
func inNetns(t *testing.T, ns, script string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "ip", "netns", "exec", ns, "bash", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("%s in %s: %v: %s", script, ns, err, out)
	}
}

// udpTo is a bash loop that sends n datagrams to 127.0.0.1:port.
func udpTo(port, n int) string {
	return fmt.Sprintf("for i in $(seq %d); do printf x > /dev/udp/127.0.0.1/%d; done", n, port)
}

// TestMetricsPrometheus runs the dropcount tool under --metrics as two
// "nodes", each tracing its own network namespace, scraped every second by
// a real Prometheus; known drops are sent in each, and PromQL through
// Prometheus' HTTP API gives exactly the numbers sent: sums by reason, by
// node, by netfilter table and chain, and the increase and rate across the
// scrapes before and after a second burst.
func TestMetricsPrometheus(t *testing.T) {
	if _, err := exec.LookPath("prometheus"); err != nil {
		t.Skipf("no prometheus binary (apt-get install prometheus): %v", err)
	}
	nodes := map[string]string{}
	inums := map[string]uint64{}
	dir := t.TempDir()
	for _, node := range []string{"a", "b"} {
		ns := "skbtm" + node
		inums[node] = netnsWithLo(t, ns)
		// A node's skbtrace sees its own kernel: here, its own namespace.
		file := dropcountIn(t, dir, node, inums[node])
		nodes[node] = freePort(t)
		startCLI(t, "--metrics", nodes[node], file)
	}
	// Node b drops datagrams to port 7000 with an nftables rule.
	nftIn(t, "skbtmb", `table inet skbt_metrics {
	chain input {
		type filter hook input priority 0; policy accept;
		udp dport 7000 drop
	}
}`)
	prom := startPrometheus(t, nodes)
	prom.waitQuery(`up`, "node=a: 1\nnode=b: 1", "node")

	inNetns(t, "skbtma", udpTo(9, 4))
	inNetns(t, "skbtmb", udpTo(9, 3)+"; "+udpTo(7000, 5))
	prom.waitQuery(`sum by (node, reason) (skbtrace_drops_total)`,
		"node=a,reason=NO_SOCKET: 4\nnode=b,reason=NETFILTER_DROP: 5\nnode=b,reason=NO_SOCKET: 3", "node", "reason")

	// A second burst on node a, between two of its scrapes: the last
	// scrape before it and the first after.
	inNetns(t, "skbtma", udpTo(9, 6))
	prom.waitQuery(`sum by (reason) (skbtrace_drops_total)`, "reason=NETFILTER_DROP: 5\nreason=NO_SOCKET: 13", "reason")
	before, after := prom.sampleTimes(`skbtrace_drops_total{node="a"}`, 4, 10)
	// Samples on both ends of the window: increase() has nothing to
	// extrapolate, and gives what was sent.
	window := fmt.Sprintf("%dms", int64(math.Round((after-before)*1000)))
	if got := byLabels(prom.query(`sum by (reason) (increase(skbtrace_drops_total{node="a"}[`+window+`]))`, after), "reason"); got != "reason=NO_SOCKET: 6" {
		t.Errorf("increase over [%s]: %s, want 6", window, got)
	}
	v := prom.query(`sum(rate(skbtrace_drops_total{node="a"}[`+window+`]))`, after)
	if len(v) != 1 || math.Abs(v[0].value()*(after-before)-6) > 1e-6 {
		t.Errorf("rate over [%s]: %v, want 6 in %gs", window, v, after-before)
	}

	prom.waitQuery(`sum by (table, chain, dev) (skbtrace_drops_total{reason="NETFILTER_DROP"})`,
		"table=skbt_metrics,chain=input,dev=lo: 5", "table", "chain", "dev")
	// Without --nftrace the nftables rule is not named: "-", its five
	// flows (a socket each) one series.
	prom.waitQuery(`skbtrace_drops_total{reason="NETFILTER_DROP"}`, "rule=-: 5", "rule")
	// byLabels sorts its lines: so must the want, whichever inode is lower.
	byNetns := []string{fmt.Sprintf("netns=%d: 10", inums["a"]), fmt.Sprintf("netns=%d: 8", inums["b"])}
	sort.Strings(byNetns)
	prom.waitQuery(`sum by (netns) (skbtrace_drops_total)`, strings.Join(byNetns, "\n"), "netns")
	for _, s := range prom.query(`skbtrace_drops_total`, 0) {
		if want := map[string]string{"NETFILTER_DROP": "nft_do_chain+0x", "NO_SOCKET": "__udp4_lib_rcv+0x"}[s.Metric["reason"]]; !strings.HasPrefix(s.Metric["location"], want) {
			t.Errorf("%v: location is not %s...", s.Metric, want)
		}
	}
	prom.waitQuery(`sum by (node) (skbtrace_events_lost_total) + sum by (node) (skbtrace_events_read_total)`, "node=a: 0\nnode=b: 0", "node")
	prom.waitQuery(`skbtrace_build_info`, "node=a,version=dev: 1\nnode=b,version=dev: 1", "node", "version")
	prom.waitQuery(`skbtrace_probes`, "node=a: 2\nnode=b: 2", "node")
}

// dropcountIn writes dropcount, its drops restricted to network namespace
// inum, to dir/dropcount-NAME.st.
func dropcountIn(t *testing.T, dir, name string, inum uint64) string {
	t.Helper()
	tool, _ := scripts.Lookup("dropcount")
	text := strings.ReplaceAll(tool.Text, "/skb->protocol != 0 &&", fmt.Sprintf("/skb->protocol != 0 && netns == %d &&", inum))
	if text == tool.Text {
		t.Fatal("dropcount's predicate has changed: the test cannot select a namespace")
	}
	file := filepath.Join(dir, "dropcount-"+name+".st")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// sampleTimes are the times of the last scrape where q's one series had
// value from and of the first where it had value to, among its samples of
// the last 30 s.
func (p *prometheus) sampleTimes(q string, from, to float64) (before, after float64) {
	p.t.Helper()
	resp, err := http.PostForm(p.base+"/api/v1/query", url.Values{"query": {q + "[30s]"}})
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Result []struct{ Values [][2]any }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		p.t.Fatal(err)
	}
	if len(r.Data.Result) != 1 {
		p.t.Fatalf("%s: %d series, want 1", q, len(r.Data.Result))
	}
	for _, s := range r.Data.Result[0].Values {
		v, _ := strconv.ParseFloat(fmt.Sprint(s[1]), 64)
		switch {
		case v == from:
			before = s[0].(float64)
		case v == to && after == 0:
			after = s[0].(float64)
		}
	}
	if before == 0 || after == 0 {
		p.t.Fatalf("%s: no samples of %g then %g: %v", q, from, to, r.Data.Result[0].Values)
	}
	return before, after
}

// TestMetricsFlagErrors: a bad address, a port in use, a bad
// --metrics-max-series and a bad or lone --web.config.file end skbtrace
// before it loads anything, exit 1 and one line.
func TestMetricsFlagErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	plain, noCert := filepath.Join(dir, "plain.yml"), filepath.Join(dir, "nocert.yml")
	os.WriteFile(plain, []byte("basic_auth_users:\n  prom: s3cret\n"), 0o600)
	os.WriteFile(noCert, []byte("tls_server_config:\n  cert_file: /nonexistent/tls.crt\n  key_file: /nonexistent/tls.key\n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--metrics", "9464"}, `skbtrace: --metrics takes HOST:PORT or :PORT, such as :9464 or 127.0.0.1:9464, not "9464"` + "\n"},
		{[]string{"--metrics", busy.Addr().String()}, "skbtrace: --metrics " + busy.Addr().String() + ": the port is in use: stop what listens there or choose another port\n"},
		{[]string{"--metrics", ":0", "--metrics-max-series", "0"}, "skbtrace: --metrics-max-series takes a positive number of series, not 0\n"},
		{[]string{"--web.config.file", plain}, "skbtrace: --web.config.file secures --metrics' scrapes: give --metrics ADDR too\n"},
		{[]string{"--metrics", ":0", "--web.config.file", filepath.Join(dir, "absent.yml")}, "skbtrace: --web.config.file " + filepath.Join(dir, "absent.yml") + ": no such file\n"},
		{[]string{"--metrics", ":0", "--web.config.file", plain}, "skbtrace: --web.config.file " + plain + ": basic_auth_users: prom's password is not a bcrypt hash (htpasswd -nBC 10 prom makes one): crypto/bcrypt: hashedSecret too short to be a bcrypted password\n"},
		{[]string{"--metrics", ":0", "--web.config.file", noCert}, "skbtrace: --web.config.file " + noCert + ": failed to read cert_file (/nonexistent/tls.crt): open /nonexistent/tls.crt: no such file or directory\n"},
		// The file is read before the address is opened: the port in use is not reached.
		{[]string{"--metrics", busy.Addr().String(), "--web.config.file", plain}, "skbtrace: --web.config.file " + plain + ": basic_auth_users: prom's password is not a bcrypt hash (htpasswd -nBC 10 prom makes one): crypto/bcrypt: hashedSecret too short to be a bcrypted password\n"},
	} {
		code, out, errs := runCLI(t, append(c.args, "-e", `tracepoint:skb:kfree_skb { @[reason] = count() }`)...)
		if code != 1 || out != "" || errs != c.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 1 and %q", c.args, code, out, errs, c.want)
		}
	}
}
