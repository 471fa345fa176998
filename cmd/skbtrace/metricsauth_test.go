package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/skbtrace/skbtrace/internal/pkitest"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// target is what Prometheus says of one scrape target.
type target struct {
	Labels    map[string]string
	Health    string
	LastError string
}

// waitTargets waits until every job's one target has been scraped (its
// health up or down, not unknown), 30 s at most, and returns them by job.
func (p *prometheus) waitTargets(jobs int) map[string]target {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := map[string]target{}
		resp, err := http.Get(p.base + "/api/v1/targets?state=active")
		if err != nil {
			p.t.Fatal(err)
		}
		var r struct {
			Data struct{ ActiveTargets []target }
		}
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if err != nil {
			p.t.Fatal(err)
		}
		for _, tg := range r.Data.ActiveTargets {
			if tg.Health != "unknown" {
				got[tg.Labels["job"]] = tg
			}
		}
		if len(got) == jobs {
			return got
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("after 30 s, %d of %d jobs scraped: %+v", len(got), jobs, r.Data.ActiveTargets)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// checkTargets fails the test unless each job's target is up (want "") or
// down with an error that want (a regular expression) matches.
func checkTargets(t *testing.T, got map[string]target, want map[string]string) {
	t.Helper()
	jobs := make([]string, 0, len(want))
	for j := range want {
		jobs = append(jobs, j)
	}
	sort.Strings(jobs)
	for _, j := range jobs {
		tg, w := got[j], want[j]
		t.Logf("job %s: %s %s", j, tg.Health, tg.LastError)
		switch {
		case w == "" && (tg.Health != "up" || tg.LastError != ""):
			t.Errorf("job %s: %s (%s), want up", j, tg.Health, tg.LastError)
		case w != "" && (tg.Health != "down" || !regexp.MustCompile(w).MatchString(tg.LastError)):
			t.Errorf("job %s: %s (%s), want down with %q", j, tg.Health, tg.LastError, w)
		}
	}
}

// scrapeJob is one job of a Prometheus scrape config: its target, and the
// lines of its scheme, tls_config and basic_auth (indented by four).
func scrapeJob(name, addr string, lines ...string) string {
	return fmt.Sprintf("  - job_name: %s\n%s    static_configs:\n      - targets: [%q]\n", name, strings.Join(lines, ""), addr)
}

// scrape GETs url with client, as user with pass if user is not empty.
func scrape(client *http.Client, url, user, pass string) (int, string, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return 0, "", err
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), nil
}

// noSocketDrops matches dropcount's series of closed-port drops.
var noSocketDrops = regexp.MustCompile(`(?m)^skbtrace_drops_total\{[^}]*reason="NO_SOCKET"[^}]*\} (\d+)$`)

// TestMetricsWebConfigPrometheus runs dropcount under --metrics with a web
// configuration file that asks for TLS, a client certificate the test's CA
// signed and basic auth, traces a network namespace of the test's own, and
// has a real Prometheus scrape it as five jobs: with every credential, and
// each missing one. Only the first is up and gets the exact drops sent; the
// others are down, refused with 401 or by the TLS handshake. A plain Go
// client is refused or served likewise.
func TestMetricsWebConfigPrometheus(t *testing.T) {
	if _, err := exec.LookPath("prometheus"); err != nil {
		t.Skipf("no prometheus binary (apt-get install prometheus): %v", err)
	}
	dir := t.TempDir()
	inum := netnsWithLo(t, "skbtmauth")
	p := pkitest.New(t, dir, "skbtm", "skbtrace", net.IPv4(127, 0, 0, 1))
	cfg := filepath.Join(dir, "web.yml")
	web := fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\n  client_ca_file: %s\n  client_auth_type: RequireAndVerifyClientCert\nbasic_auth_users:\n  prom: %s\n",
		p.ServerCert, p.ServerKey, p.CAFile, pkitest.Bcrypt(t, "s3cret"))
	right, wrong := filepath.Join(dir, "right"), filepath.Join(dir, "wrong")
	for file, text := range map[string]string{cfg: web, right: "s3cret", wrong: "guess"} {
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	addr := freePort(t)
	startCLI(t, "--metrics", addr, "--web.config.file", cfg, dropcountIn(t, dir, "auth", inum))

	https := "    scheme: https\n"
	tlsAll := fmt.Sprintf("    tls_config: {ca_file: %q, cert_file: %q, key_file: %q}\n", p.CAFile, p.ClientCert, p.ClientKey)
	auth := func(file string) string {
		return fmt.Sprintf("    basic_auth: {username: prom, password_file: %q}\n", file)
	}
	prom := startPrometheusJobs(t, scrapeJob("right", addr, https, tlsAll, auth(right))+
		scrapeJob("anonymous", addr, https, tlsAll)+
		scrapeJob("wrong-password", addr, https, tlsAll, auth(wrong))+
		scrapeJob("no-ca", addr, https, fmt.Sprintf("    tls_config: {cert_file: %q, key_file: %q}\n", p.ClientCert, p.ClientKey), auth(right))+
		scrapeJob("no-client-cert", addr, https, fmt.Sprintf("    tls_config: {ca_file: %q}\n", p.CAFile), auth(right)))
	checkTargets(t, prom.waitTargets(5), map[string]string{
		"right":          "",
		"anonymous":      "401 Unauthorized",
		"wrong-password": "401 Unauthorized",
		"no-ca":          "certificate signed by unknown authority",
		// TLS 1.3: the client's handshake ends before the server checks
		// its certificate, so the server's alert may come after the
		// request was written, or its close first.
		"no-client-cert": "tls: certificate required|broken pipe|connection reset by peer",
	})

	inNetns(t, "skbtmauth", udpTo(9, 7))
	prom.waitQuery(`sum by (job, reason) (skbtrace_drops_total)`, "job=right,reason=NO_SOCKET: 7", "job", "reason")
	prom.waitQuery(`up`, "job=anonymous: 0\njob=no-ca: 0\njob=no-client-cert: 0\njob=right: 1\njob=wrong-password: 0", "job")

	// A plain Go client: refused without the password, served with it.
	url := "https://" + addr + "/metrics"
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.CAPool, Certificates: []tls.Certificate{p.Client}}}}
	defer client.CloseIdleConnections()
	if code, body, err := scrape(client, url, "", ""); err != nil || code != 401 || strings.Contains(body, "skbtrace_") {
		t.Errorf("without the password: %d, %v:\n%s", code, err, body)
	}
	if code, _, err := scrape(client, url, "prom", "guess"); err != nil || code != 401 {
		t.Errorf("with a wrong password: %d, %v", code, err)
	}
	code, body, err := scrape(client, url, "prom", "s3cret")
	if m := noSocketDrops.FindStringSubmatch(body); err != nil || code != 200 || m == nil || m[1] != "7" {
		t.Errorf("with the password: %d, %v, want 7 NO_SOCKET drops:\n%s", code, err, body)
	}
	noCA := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509.NewCertPool(), Certificates: []tls.Certificate{p.Client}}}}
	if _, _, err := scrape(noCA, url, "prom", "s3cret"); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("without the CA: %v, want the certificate refused", err)
	}
}

// TestMetricsDaemonSetDefault runs dropcount with the DaemonSet's own
// arguments (deploy/kubernetes/daemonset.yaml: its port and the network
// namespace aside) and the credentials deploy/kubernetes/web-config.sh
// makes, laid out as the Secret is mounted, and has a real Prometheus
// scrape it as the PodMonitor does (https, the CA, server name and basic
// auth of Secret skbtrace-scrape): it gets the exact drops sent, and the
// same scrape without the password, or over plain HTTP, is refused.
func TestMetricsDaemonSetDefault(t *testing.T) {
	for _, tool := range []string{"prometheus", "openssl", "htpasswd"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s (apt-get install prometheus openssl apache2-utils): %v", tool, err)
		}
	}
	dir := t.TempDir()
	creds := filepath.Join(dir, "creds")
	if out, err := exec.Command("bash", "../../deploy/kubernetes/web-config.sh", creds).CombinedOutput(); err != nil {
		t.Fatalf("web-config.sh: %v\n%s", err, out)
	}
	data, err := os.ReadFile("../../deploy/kubernetes/daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ds appsv1.DaemonSet
	if err := yaml.Unmarshal(data, &ds); err != nil {
		t.Fatal(err)
	}
	c := ds.Spec.Template.Spec.Containers[0]
	// The web config's directory in the pod is creds here; the port is a
	// free one; dropcount traces the test's namespace alone.
	inum := netnsWithLo(t, "skbtmds")
	addr := freePort(t)
	args := append([]string(nil), c.Args...)
	secured := false
	for i := range args {
		switch {
		case i > 0 && args[i-1] == "--metrics":
			args[i] = addr
		case i > 0 && args[i-1] == "--web.config.file":
			for _, m := range c.VolumeMounts {
				if strings.HasPrefix(args[i], m.MountPath+"/") {
					args[i] = filepath.Join(creds, strings.TrimPrefix(args[i], m.MountPath+"/"))
					secured = true
				}
			}
		case args[i] == "dropcount":
			args[i] = dropcountIn(t, dir, "ds", inum)
		}
	}
	if !secured {
		t.Fatalf("the DaemonSet's args %q give no --web.config.file in a mounted volume: its metrics are not secured", c.Args)
	}
	startCLI(t, args...)

	password := filepath.Join(creds, "password")
	ca := filepath.Join(creds, "ca.crt")
	tlsCfg := fmt.Sprintf("    tls_config: {ca_file: %q, server_name: skbtrace}\n", ca)
	auth := fmt.Sprintf("    basic_auth: {username: skbtrace, password_file: %q}\n", password)
	prom := startPrometheusJobs(t, scrapeJob("podmonitor", addr, "    scheme: https\n", tlsCfg, auth)+
		scrapeJob("anonymous", addr, "    scheme: https\n", tlsCfg)+
		scrapeJob("plain-http", addr, auth))
	checkTargets(t, prom.waitTargets(3), map[string]string{
		"podmonitor": "",
		"anonymous":  "401 Unauthorized",
		"plain-http": "400 Bad Request",
	})
	inNetns(t, "skbtmds", udpTo(9, 5))
	prom.waitQuery(`sum by (job, reason) (skbtrace_drops_total)`, "job=podmonitor,reason=NO_SOCKET: 5", "job", "reason")

	// Without the password a client that trusts the CA gets 401 and no
	// metrics.
	roots := x509.NewCertPool()
	pem, err := os.ReadFile(ca)
	if err != nil || !roots.AppendCertsFromPEM(pem) {
		t.Fatalf("%s: %v", ca, err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "skbtrace"}}}
	defer client.CloseIdleConnections()
	if code, body, err := scrape(client, "https://"+addr+"/metrics", "", ""); err != nil || code != 401 || strings.Contains(body, "skbtrace_") {
		t.Errorf("without the password: %d, %v:\n%s", code, err, body)
	}
}
