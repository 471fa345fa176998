// Package pkitest makes what tests of TLS and basic auth need, in a test's
// temporary directory: a CA, a server certificate and a client certificate
// it signed, their keys as PEM files, and bcrypt hashes of passwords. Two
// PKIs are strangers: one's client certificate stands for a client the
// other's server does not know.
package pkitest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// PKI is a CA and the certificates it signed, as files and as values.
type PKI struct {
	// CAFile, ServerCert, ServerKey, ClientCert and ClientKey are PEM files.
	CAFile, ServerCert, ServerKey, ClientCert, ClientKey string
	// CAPool holds the CA alone.
	CAPool *x509.CertPool
	// Client is the client certificate and key, for tls.Config.
	Client tls.Certificate

	ca    *x509.Certificate
	caKey *ecdsa.PrivateKey
}

// New makes a CA named name, and in dir a server certificate for the DNS
// name server and the addresses ips, and a client certificate, both valid
// for an hour.
func New(t testing.TB, dir, name, server string, ips ...net.IP) *PKI {
	t.Helper()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p := &PKI{CAFile: filepath.Join(dir, name+"-ca.crt"), CAPool: x509.NewCertPool(), ca: ca, caKey: caKey}
	p.CAPool.AddCert(ca)
	writePEM(t, p.CAFile, "CERTIFICATE", der)
	p.ServerCert, p.ServerKey, _ = p.issue(t, dir, name+"-server", &x509.Certificate{
		Subject:     pkix.Name{CommonName: server},
		DNSNames:    []string{server},
		IPAddresses: ips,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	p.ClientCert, p.ClientKey, p.Client = p.issue(t, dir, name+"-client", &x509.Certificate{
		Subject:     pkix.Name{CommonName: name + " client"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	return p
}

// issue signs tmpl with the CA and writes the certificate and its key to
// dir/base.crt and dir/base.key.
func (p *PKI) issue(t testing.TB, dir, base string, tmpl *x509.Certificate) (certFile, keyFile string, pair tls.Certificate) {
	t.Helper()
	key := newKey(t)
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = p.ca.NotBefore
	tmpl.NotAfter = p.ca.NotAfter
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, base+".crt"), filepath.Join(dir, base+".key")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
	pair, err = tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pair
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func writePEM(t testing.TB, file, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Bcrypt is password's bcrypt hash at the least cost (the tests' logins
// are many; the cost is not what they test).
func Bcrypt(t testing.TB, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}
