package metrics_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/internal/pkitest"
	"github.com/skbtrace/skbtrace/runtime/metrics"
)

// writeFile writes text to dir/name and returns its path.
func writeFile(t testing.TB, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoadWebConfigErrors: each fault of a web configuration file is one
// line that names the flag, the file and what is wrong.
func TestLoadWebConfigErrors(t *testing.T) {
	dir := t.TempDir()
	p := pkitest.New(t, dir, "a", "skbtrace")
	for _, c := range []struct{ name, text, want string }{
		{"missing-cert.yml", "tls_server_config:\n  cert_file: nope.crt\n  key_file: nope.key\n",
			"failed to read cert_file (" + filepath.Join(dir, "nope.crt") + "): open " + filepath.Join(dir, "nope.crt") + ": no such file or directory"},
		{"bad-yaml.yml", "tls_server_config:\n  cert_file: [\n",
			"not a web configuration file (exporter-toolkit's format): yaml: line 2: did not find expected node content"},
		{"bad-field.yml", "tls_server_configs:\n  cert_file: a\n",
			"not a web configuration file (exporter-toolkit's format): yaml: unmarshal errors: line 1: field tls_server_configs not found in type web.Config"},
		{"bad-bcrypt.yml", "basic_auth_users:\n  alice: " + pkitest.Bcrypt(t, "x") + "\n  bob: hunter2\n",
			"basic_auth_users: bob's password is not a bcrypt hash (htpasswd -nBC 10 bob makes one): crypto/bcrypt: hashedSecret too short to be a bcrypted password"},
		{"no-key.yml", "tls_server_config:\n  cert_file: " + p.ServerCert + "\n",
			"missing one of key or key_file"},
		{"wrong-key.yml", "tls_server_config:\n  cert_file: " + p.ServerCert + "\n  key_file: " + p.ClientKey + "\n",
			"failed to load X509KeyPair: tls: private key does not match public key"},
		{"bad-auth.yml", "tls_server_config:\n  cert_file: " + p.ServerCert + "\n  key_file: " + p.ServerKey + "\n  client_auth_type: Sometimes\n",
			"invalid ClientAuth: Sometimes"},
		{"ca-no-auth.yml", "tls_server_config:\n  cert_file: " + p.ServerCert + "\n  key_file: " + p.ServerKey + "\n  client_ca_file: " + p.CAFile + "\n",
			"client CA's have been configured without a Client Auth Policy"},
	} {
		path := writeFile(t, dir, c.name, c.text)
		_, err := metrics.LoadWebConfig(path)
		want := "--web.config.file " + path + ": " + c.want
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant: %s", c.name, err, want)
		}
	}
	if _, err := metrics.LoadWebConfig(filepath.Join(dir, "absent.yml")); err == nil || err.Error() != "--web.config.file "+filepath.Join(dir, "absent.yml")+": no such file" {
		t.Errorf("absent file: %v", err)
	}
}

// TestLoadWebConfigDescribe: what the start line says of a good file.
func TestLoadWebConfigDescribe(t *testing.T) {
	dir := t.TempDir()
	p := pkitest.New(t, dir, "a", "skbtrace")
	tlsPart := "tls_server_config:\n  cert_file: " + p.ServerCert + "\n  key_file: " + p.ServerKey + "\n"
	users := "basic_auth_users:\n  alice: " + pkitest.Bcrypt(t, "a") + "\n  bob: " + pkitest.Bcrypt(t, "b") + "\n"
	for _, c := range []struct{ text, scheme, want string }{
		{tlsPart, "https", "TLS, no basic auth"},
		{tlsPart + "  client_ca_file: " + p.CAFile + "\n  client_auth_type: RequireAndVerifyClientCert\n" + users, "https",
			"TLS, client certificates (RequireAndVerifyClientCert), basic auth (2 users)"},
		{users, "http", "no TLS, basic auth (2 users)"},
		{"", "http", "no TLS, no basic auth"},
	} {
		wc, err := metrics.LoadWebConfig(writeFile(t, dir, "web.yml", c.text))
		if err != nil {
			t.Errorf("%q: %v", c.text, err)
			continue
		}
		if wc.Scheme() != c.scheme || wc.Describe() != c.want {
			t.Errorf("%q: %s, %q; want %s, %q", c.text, wc.Scheme(), wc.Describe(), c.scheme, c.want)
		}
	}
}

// TestServeWebConfig serves the Go process's metrics behind TLS with
// client certificates and basic auth, and scrapes them as clients with and
// without each credential would.
func TestServeWebConfig(t *testing.T) {
	dir := t.TempDir()
	p := pkitest.New(t, dir, "a", "skbtrace", net.IPv4(127, 0, 0, 1))
	stranger := pkitest.New(t, dir, "b", "skbtrace", net.IPv4(127, 0, 0, 1))
	hash := pkitest.Bcrypt(t, "right")
	web := fmt.Sprintf(`tls_server_config:
  cert_file: %s
  key_file: %s
  client_ca_file: %s
  client_auth_type: RequireAndVerifyClientCert
basic_auth_users:
  prom: %s
`, p.ServerCert, p.ServerKey, p.CAFile, hash)
	cfg := writeFile(t, dir, "web.yml", web)
	wc, err := metrics.LoadWebConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var warnings strings.Builder
	srv, err := metrics.ListenWeb("127.0.0.1:0", wc, func(format string, args ...any) { fmt.Fprintf(&warnings, format+"\n", args...) })
	if err != nil {
		t.Fatal(err)
	}
	srv.Serve()
	defer srv.Close()
	if want := "https://" + srv.Addr().String() + "/metrics"; srv.URL() != want {
		t.Errorf("URL %s, want %s", srv.URL(), want)
	}

	scrape := func(roots *x509.CertPool, certs []tls.Certificate, user, pass string) (int, string, error) {
		// The client offers its certificate whichever CAs the server names
		// (Go's would offer none that another CA signed).
		offer := func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			if len(certs) == 0 {
				return &tls.Certificate{}, nil
			}
			return &certs[0], nil
		}
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, GetClientCertificate: offer}}}
		defer client.CloseIdleConnections()
		req, _ := http.NewRequest("GET", srv.URL(), nil)
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
	mine := []tls.Certificate{p.Client}
	for _, c := range []struct {
		name       string
		roots      *x509.CertPool
		certs      []tls.Certificate
		user, pass string
		code       int
		err        string
	}{
		{"right credentials", p.CAPool, mine, "prom", "right", 200, ""},
		{"no basic auth", p.CAPool, mine, "", "", 401, ""},
		{"wrong password", p.CAPool, mine, "prom", "wrong", 401, ""},
		{"unknown user", p.CAPool, mine, "eve", "right", 401, ""},
		{"no CA", x509.NewCertPool(), mine, "prom", "right", 0, "certificate signed by unknown authority"},
		{"no client certificate", p.CAPool, nil, "prom", "right", 0, "certificate required"},
		{"a stranger's client certificate", p.CAPool, []tls.Certificate{stranger.Client}, "prom", "right", 0, "unknown certificate authority"},
	} {
		code, body, err := scrape(c.roots, c.certs, c.user, c.pass)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %d, %v; want an error with %q", c.name, code, err, c.err)
		case c.err == "" && (err != nil || code != c.code):
			t.Errorf("%s: %d, %v; want %d", c.name, code, err, c.code)
		case code == 200 && !strings.Contains(body, "\ngo_goroutines "):
			t.Errorf("%s: no go_goroutines in\n%s", c.name, body)
		case code == 401 && strings.Contains(body, "go_goroutines"):
			t.Errorf("%s: 401 with metrics", c.name)
		}
	}
	// The file is read again at each connection and request: a new
	// password is taken without a restart, and a file that no longer reads
	// refuses the scrape, with a warning.
	rotated := strings.Replace(web, hash, pkitest.Bcrypt(t, "rotated"), 1)
	if err := os.WriteFile(cfg, []byte(rotated), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, err := scrape(p.CAPool, mine, "prom", "right"); err != nil || code != 401 {
		t.Errorf("the old password after the file changed: %d, %v; want 401", code, err)
	}
	if code, _, err := scrape(p.CAPool, mine, "prom", "rotated"); err != nil || code != 200 {
		t.Errorf("the new password after the file changed: %d, %v; want 200", code, err)
	}
	if err := os.WriteFile(cfg, []byte("basic_auth_users: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// (TLS reads it at the handshake, which fails.)
	if code, _, err := scrape(p.CAPool, mine, "prom", "rotated"); err == nil {
		t.Errorf("a file that no longer reads: %d; want the handshake refused", code)
	}
	if err := os.WriteFile(cfg, []byte(rotated), 0o600); err != nil {
		t.Fatal(err)
	}
	// Plain HTTP to the TLS port: Go's server answers 400.
	resp, err := http.Get("http://" + srv.Addr().String() + "/metrics")
	if err != nil || resp.StatusCode != 400 {
		t.Errorf("plain HTTP: %v %v, want 400", resp, err)
	}
	if err == nil {
		resp.Body.Close()
	}
	srv.Close()
	// The handshakes that failed and the file that did not read were
	// reported, a line each.
	got := warnings.String()
	for _, want := range []string{"metrics: http: TLS handshake error from 127.0.0.1:", "yaml: line 1: did not find expected node content"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in the warnings:\n%s", want, got)
		}
	}
}
