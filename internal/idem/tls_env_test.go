package idem

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/internal/testenv"
)

// tlsFiles are PEM files of a test CA, a server certificate it signed for
// 127.0.0.1 and localhost, and a client certificate it signed.
type tlsFiles struct {
	CA, Cert, Key, ClientCert, ClientKey string
}

// query is the URL options that make a client trust the CA and present
// the client certificate.
func (f tlsFiles) query() string {
	return "tls_ca=" + f.CA + "&tls_cert=" + f.ClientCert + "&tls_key=" + f.ClientKey
}

// config is a Go TLS config for the tests' own checks.
func (f tlsFiles) config(t *testing.T) *tls.Config {
	t.Helper()
	c, err := tlsConf{on: true, ca: f.CA, cert: f.ClientCert, key: f.ClientKey}.apply(nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// serverArgs are redis-server's TLS options, listening on TLS only.
func (f tlsFiles) serverArgs(port int) []string {
	return []string{"--port", "0", "--tls-port", strconv.Itoa(port), "--tls-cert-file", f.Cert, "--tls-key-file", f.Key,
		"--tls-ca-cert-file", f.CA, "--tls-auth-clients", "yes", "--tls-replication", "yes", "--bind", "127.0.0.1"}
}

func makeTLSFiles(t *testing.T) tlsFiles {
	t.Helper()
	dir := t.TempDir()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	writeKey := func(name string, k *ecdsa.PrivateKey) string {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(name, "PRIVATE KEY", der)
	}
	now := time.Now()
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "toolgate test CA"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, k *ecdsa.PrivateKey) []byte {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.IPAddresses, tmpl.DNSNames = []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost", "redis.test"}
			// Redis's replication and cluster bus dial as clients with the
			// server certificate.
			tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	sk, ck := key(), key()
	return tlsFiles{
		CA:         write("ca.pem", "CERTIFICATE", caDER),
		Cert:       write("server.pem", "CERTIFICATE", leaf(2, "redis", x509.ExtKeyUsageServerAuth, sk)),
		Key:        writeKey("server.key", sk),
		ClientCert: write("client.pem", "CERTIFICATE", leaf(3, "toolgate", x509.ExtKeyUsageClientAuth, ck)),
		ClientKey:  writeKey("client.key", ck),
	}
}

// tlsProc is a redis-server (or sentinel) listening on TLS only.
type tlsProc struct {
	Addr string
	cmd  *exec.Cmd
	done chan struct{}
}

// startTLS starts redis-server with args, kills it in cleanup, and returns
// once PING answers over TLS at port.
func startTLS(t *testing.T, f tlsFiles, port int, args ...string) *tlsProc {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("redis-server not found in PATH (apt-get install redis-server): %v", err)
	}
	p := &tlsProc{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: exec.Command("redis-server", args...), done: make(chan struct{})}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	c := redis.NewClient(&redis.Options{Addr: p.Addr, TLSConfig: f.config(t)})
	defer c.Close()
	err := testenv.Poll(30*time.Second, 20*time.Millisecond, func() error {
		select {
		case <-p.done:
			return errors.New("redis-server exited at start")
		default:
		}
		return c.Ping(context.Background()).Err()
	})
	if err != nil {
		t.Fatalf("redis-server %v: %v", args, err)
	}
	return p
}
