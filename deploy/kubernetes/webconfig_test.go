package kubernetes

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skbtrace/skbtrace/runtime/metrics"
	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// What daemonset.yaml, podmonitor.yaml and web-config.sh agree on.
const (
	// webConfigSecret is mounted at webConfigMount with webConfigKeys.
	webConfigSecret = "skbtrace-web-config"
	webConfigMount  = "/etc/skbtrace/web"
	// scrapeSecret holds ca.crt, username and password for Prometheus.
	scrapeSecret = "skbtrace-scrape"
	// serverName is the name the pods' certificate is for.
	serverName = "skbtrace"
)

var webConfigKeys = []string{"web-config.yml", "tls.crt", "tls.key"}

// TestWebConfigScript runs web-config.sh and checks what it makes: the two
// Secrets decode strictly, in the DaemonSet's namespace, with the keys the
// DaemonSet mounts and the PodMonitor reads; the web config, laid out as
// the kubelet mounts the Secret, is one skbtrace serves (TLS, user
// skbtrace); the password matches its bcrypt hash; the CA verifies the
// certificate for the server name. The script refuses a directory that is
// not empty.
func TestWebConfigScript(t *testing.T) {
	for _, tool := range []string{"bash", "openssl", "htpasswd"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("web-config.sh needs %s (apt-get install openssl apache2-utils): %v", tool, err)
		}
	}
	_, _, ds, _ := manifests(t)
	dir := filepath.Join(t.TempDir(), "creds")
	if out, err := exec.Command("bash", "web-config.sh", dir).CombinedOutput(); err != nil {
		t.Fatalf("web-config.sh: %v\n%s", err, out)
	}
	if out, err := exec.Command("bash", "web-config.sh", dir).CombinedOutput(); err == nil || !strings.Contains(string(out), "is not empty") {
		t.Errorf("web-config.sh into a full directory: %v\n%s", err, out)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	var web, scrape corev1.Secret
	decodeStrict(t, filepath.Join(dir, "web-config-secret.yaml"), &web)
	decodeStrict(t, filepath.Join(dir, "scrape-secret.yaml"), &scrape)
	for _, c := range []struct {
		s    corev1.Secret
		name string
		keys []string
	}{
		{web, webConfigSecret, webConfigKeys},
		{scrape, scrapeSecret, []string{"ca.crt", "username", "password"}},
	} {
		var keys []string
		for k := range c.s.StringData {
			keys = append(keys, k)
		}
		if c.s.Name != c.name || c.s.Namespace != ds.Namespace || !slices.Equal(slices.Sorted(slices.Values(keys)), slices.Sorted(slices.Values(c.keys))) {
			t.Errorf("Secret %s/%s with %v, want %s/%s with %v", c.s.Namespace, c.s.Name, keys, ds.Namespace, c.name, c.keys)
		}
	}
	if scrape.StringData["username"] != "skbtrace" || scrape.StringData["password"] != read("password") || scrape.StringData["ca.crt"] != read("ca.crt") {
		t.Errorf("scrape secret %v does not carry user skbtrace and the password and CA made", scrape.StringData)
	}

	// The pod's view: the Secret's keys as files in one directory.
	mount := t.TempDir()
	for _, k := range webConfigKeys {
		if web.StringData[k] != read(k) {
			t.Errorf("web secret's %s differs from the file made", k)
		}
		if err := os.WriteFile(filepath.Join(mount, k), []byte(web.StringData[k]), 0o400); err != nil {
			t.Fatal(err)
		}
	}
	wc, err := metrics.LoadWebConfig(filepath.Join(mount, "web-config.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !wc.TLS || !slices.Equal(wc.Users, []string{"skbtrace"}) {
		t.Errorf("web config: TLS %v, users %v; want TLS and user skbtrace alone", wc.TLS, wc.Users)
	}
	var cfg struct {
		Users map[string]string `json:"basic_auth_users"`
	}
	if err := yaml.Unmarshal([]byte(web.StringData["web-config.yml"]), &cfg); err != nil {
		t.Fatal(err)
	}
	if err := bcrypt.CompareHashAndPassword([]byte(cfg.Users["skbtrace"]), []byte(read("password"))); err != nil {
		t.Errorf("the password does not match user skbtrace's hash: %v", err)
	}

	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(read("ca.crt"))) {
		t.Fatal("ca.crt holds no certificate")
	}
	block, _ := pem.Decode([]byte(read("tls.crt")))
	if block == nil {
		t.Fatal("tls.crt holds no PEM block")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: serverName, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("tls.crt for %s: %v", serverName, err)
	}
}
