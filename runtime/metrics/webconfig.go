package metrics

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v2"
	"golang.org/x/crypto/bcrypt"
)

// WebConfig is a web configuration file in the Prometheus exporter-toolkit's
// format, as node_exporter's --web.config.file takes it: tls_server_config
// (cert_file, key_file, client_ca_file, client_auth_type, ...),
// basic_auth_users (names and bcrypt hashes), http_server_config. The
// toolkit reads it again at each connection and request, so a renewed
// certificate or a changed user is taken without a restart.
type WebConfig struct {
	// Path is the file's name as given.
	Path string
	// TLS tells whether the file configures TLS (https://).
	TLS bool
	// ClientAuth is tls_server_config's client_auth_type, "" if unset.
	ClientAuth string
	// Users are basic_auth_users' names, sorted.
	Users []string
}

// LoadWebConfig reads and checks the web configuration file at path as the
// toolkit will serve it: the YAML and its field names, every user's bcrypt
// hash, the certificate and key (read and paired) and the client CA file.
// The error says what is wrong, in one line, and names the flag.
func LoadWebConfig(path string) (*WebConfig, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("--web.config.file %s: %s", path, oneLine(fmt.Sprintf(format, args...)))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fail("no such file")
		}
		return nil, fail("%v", err)
	}
	var c web.Config
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fail("not a web configuration file (exporter-toolkit's format): %v", err)
	}
	wc := &WebConfig{Path: path, TLS: c.TLSConfig.IsEnabled(), ClientAuth: c.TLSConfig.ClientAuth}
	for user := range c.Users {
		wc.Users = append(wc.Users, user)
	}
	slices.Sort(wc.Users)
	for _, user := range wc.Users {
		if _, err := bcrypt.Cost([]byte(c.Users[user])); err != nil {
			return nil, fail("basic_auth_users: %s's password is not a bcrypt hash (htpasswd -nBC 10 %s makes one): %v", user, user, err)
		}
	}
	// The rest as the toolkit checks it when it serves: the files named,
	// the key pair, client_auth_type, the headers.
	if err := web.Validate(path); err != nil {
		return nil, fail("%v", err)
	}
	return wc, nil
}

// Scheme is https with TLS, else http.
func (wc *WebConfig) Scheme() string {
	if wc != nil && wc.TLS {
		return "https"
	}
	return "http"
}

// Describe says how scrapes are secured: "TLS, client certificates
// (RequireAndVerifyClientCert), basic auth (1 user)", or "no TLS, no
// authentication".
func (wc *WebConfig) Describe() string {
	var parts []string
	switch {
	case wc == nil || !wc.TLS:
		parts = append(parts, "no TLS")
	case wc.ClientAuth != "" && wc.ClientAuth != "NoClientCert":
		parts = append(parts, "TLS", "client certificates ("+wc.ClientAuth+")")
	default:
		parts = append(parts, "TLS")
	}
	switch {
	case wc == nil || len(wc.Users) == 0:
		parts = append(parts, "no basic auth")
	case len(wc.Users) == 1:
		parts = append(parts, "basic auth (1 user)")
	default:
		parts = append(parts, fmt.Sprintf("basic auth (%d users)", len(wc.Users)))
	}
	return strings.Join(parts, ", ")
}

// oneLine joins a multi-line message (YAML's errors list a line each) with
// "; ", or a space after a line that ends in a colon.
func oneLine(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if b.Len() > 0 {
			if strings.HasSuffix(b.String(), ":") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(l)
	}
	return b.String()
}
