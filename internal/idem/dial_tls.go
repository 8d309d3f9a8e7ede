package idem

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// tlsConf is the TLS a Redis URL asks for: on by its scheme (rediss,
// rediss-sentinel, rediss-cluster) or by tls=true, with a CA bundle, a
// client certificate and a server name to verify, all optional.
type tlsConf struct {
	on                        bool
	ca, cert, key, serverName string
}

// tlsKeys are the query options takeTLS reads.
func tlsKeys() []string { return []string{"tls", "tls_ca", "tls_cert", "tls_key", "tls_server_name"} }

// takeTLS reads the TLS options of u and removes them from q; it returns
// the scheme without its TLS spelling (rediss-sentinel is redis-sentinel
// with TLS on). rediss stays rediss: go-redis turns its TLS on.
func takeTLS(u *url.URL, q url.Values) (string, tlsConf, error) {
	scheme := u.Scheme
	var c tlsConf
	switch scheme {
	case "rediss":
		c.on = true
	case "rediss-sentinel", "rediss-cluster":
		c.on, scheme = true, "redis-"+strings.TrimPrefix(scheme, "rediss-")
	}
	switch v := q.Get("tls"); v {
	case "":
	case "true":
		if scheme == "redis" {
			scheme = "rediss"
		}
		c.on = true
	case "false":
		if c.on {
			return "", c, fmt.Errorf("idem: redis url: tls=false with the TLS scheme %s://", u.Scheme)
		}
	default:
		return "", c, fmt.Errorf("idem: redis url: tls %q: want true or false", v)
	}
	c.ca, c.cert, c.key, c.serverName = q.Get("tls_ca"), q.Get("tls_cert"), q.Get("tls_key"), q.Get("tls_server_name")
	for _, k := range tlsKeys() {
		q.Del(k)
	}
	switch {
	case !c.on && (c.ca != "" || c.cert != "" || c.key != "" || c.serverName != ""):
		return "", c, fmt.Errorf("idem: redis url: tls_ca, tls_cert, tls_key and tls_server_name need TLS: use rediss://, rediss-sentinel:// or rediss-cluster:// (or tls=true)")
	case c.on && scheme == "unix":
		return "", c, errors.New("idem: redis url: TLS over a unix socket is not supported")
	case (c.cert == "") != (c.key == ""):
		return "", c, errors.New("idem: redis url: tls_cert and tls_key go together (the client certificate and its key, PEM files)")
	}
	return scheme, c, nil
}

// apply sets c on cfg (nil: a new config): the CA bundle instead of the
// system roots, the client certificate, the server name. Files are read
// now, once: a certificate renewed later needs a restart.
func (c tlsConf) apply(cfg *tls.Config) (*tls.Config, error) {
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if c.ca != "" {
		pem, err := os.ReadFile(c.ca)
		if err != nil {
			return nil, fmt.Errorf("idem: redis url: tls_ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("idem: redis url: tls_ca %s: no PEM certificate in it", c.ca)
		}
		cfg.RootCAs = pool
	}
	if c.cert != "" {
		pair, err := tls.LoadX509KeyPair(c.cert, c.key)
		if err != nil {
			return nil, fmt.Errorf("idem: redis url: tls_cert/tls_key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if c.serverName != "" {
		cfg.ServerName = c.serverName
	}
	return cfg, nil
}
