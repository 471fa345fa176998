package metrics_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/skbtrace/skbtrace/internal/pkitest"
	"github.com/skbtrace/skbtrace/runtime/metrics"
	"golang.org/x/crypto/bcrypt"
)

// BenchmarkServeWebConfig is one scrape of the Go process's metrics over
// loopback (no kernel map: what the web configuration adds is measured),
// served plain, behind TLS and basic auth (a bcrypt hash of cost 10, as
// htpasswd -nBC 10 makes), and with client certificates too; on a kept-
// alive connection, as Prometheus scrapes, and on a new connection each
// time (a TLS handshake each). "wrong-password" is a scrape whose password
// is new each time: the bcrypt comparison the toolkit caches only for
// passwords it has seen.
func BenchmarkServeWebConfig(b *testing.B) {
	dir := b.TempDir()
	p := pkitest.New(b, dir, "bench", "skbtrace", net.IPv4(127, 0, 0, 1))
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), 10)
	if err != nil {
		b.Fatal(err)
	}
	users := fmt.Sprintf("basic_auth_users:\n  prom: %s\n", hash)
	tlsPart := fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\n", p.ServerCert, p.ServerKey)
	mtls := tlsPart + fmt.Sprintf("  client_ca_file: %s\n  client_auth_type: RequireAndVerifyClientCert\n", p.CAFile)
	for _, c := range []struct {
		name, config string
		newConn      bool
		wrong        bool
	}{
		{"plain/keepalive", "", false, false},
		{"tls+auth/keepalive", tlsPart + users, false, false},
		{"tls+auth/newconn", tlsPart + users, true, false},
		{"mtls+auth/keepalive", mtls + users, false, false},
		{"mtls+auth/newconn", mtls + users, true, false},
		{"tls+auth/wrong-password", tlsPart + users, false, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			var wc *metrics.WebConfig
			if c.config != "" {
				var err error
				if wc, err = metrics.LoadWebConfig(writeFile(b, dir, "web.yml", c.config)); err != nil {
					b.Fatal(err)
				}
			}
			srv, err := metrics.ListenWeb("127.0.0.1:0", wc, nil)
			if err != nil {
				b.Fatal(err)
			}
			srv.Serve()
			defer srv.Close()
			tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.CAPool, Certificates: []tls.Certificate{p.Client}}, DisableKeepAlives: c.newConn}
			client := &http.Client{Transport: tr}
			defer tr.CloseIdleConnections()
			want := 200
			if c.wrong {
				want = 401
			}
			i := 0
			for b.Loop() {
				req, _ := http.NewRequest("GET", srv.URL(), nil)
				pass := "s3cret"
				if c.wrong {
					i++
					pass = fmt.Sprintf("guess%d", i)
				}
				req.SetBasicAuth("prom", pass)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != want {
					b.Fatalf("status %d, want %d", resp.StatusCode, want)
				}
			}
		})
	}
}
