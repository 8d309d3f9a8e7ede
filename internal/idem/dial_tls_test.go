package idem

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/internal/testenv"
)

// Every form takes TLS, by scheme or tls=true, with a CA bundle, a client
// certificate and a server name. Before, rediss-sentinel:// and
// rediss-cluster:// were unknown schemes and a cluster URL took no option.
func TestDial_tls_forms_set_the_client_tls(t *testing.T) {
	f := makeTLSFiles(t)
	q := f.query()
	for _, test := range []struct {
		url, serverName string
	}{
		{"rediss://127.0.0.1:6380/0?" + q, "127.0.0.1"},
		{"redis://127.0.0.1:6380?tls=true&" + q + "&tls_server_name=redis.test", "redis.test"},
		{"rediss-sentinel://h1:26379,h2:26380/mymaster?db=1&" + q, ""},
		{"redis-sentinel://h1:26379/mymaster?tls=true&" + q, ""},
		{"rediss-cluster://h1:7000,h2:7001?" + q + "&wait_replicas=1", ""},
		{"redis-cluster://h1:7000?tls=true&" + q + "&tls_server_name=redis.test", "redis.test"},
	} {
		s, err := Dial(test.url)
		if err != nil {
			t.Errorf("Dial(%s): %v", test.url, err)
			continue
		}
		tc := tlsOf(s)
		if tc == nil || tc.RootCAs == nil || len(tc.Certificates) != 1 || tc.ServerName != test.serverName || tc.MinVersion < tls.VersionTLS12 {
			t.Errorf("Dial(%s): TLS %+v, want the CA, the client certificate and server name %q", test.url, tc, test.serverName)
		}
		s.Close()
	}
	for _, url := range []string{"redis://h:6379", "redis-sentinel://h1:26379/m", "redis-cluster://h1:7000", "redis-sentinel://h1:26379/m?tls=false"} {
		s, err := Dial(url)
		if err != nil {
			t.Fatalf("Dial(%s): %v", url, err)
		}
		if tc := tlsOf(s); tc != nil {
			t.Errorf("Dial(%s): TLS on without being asked", url)
		}
		s.Close()
	}
}

func TestDial_tls_options_refused_with_a_reason(t *testing.T) {
	f := makeTLSFiles(t)
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for url, want := range map[string]string{
		"redis://h:6379?tls_ca=" + f.CA:                                "need TLS",
		"redis-cluster://h:7000?tls_cert=" + f.ClientCert:              "need TLS",
		"rediss-cluster://h:7000?tls=false":                            "tls=false",
		"redis-sentinel://h:26379/m?tls=yes":                           "want true or false",
		"rediss://h:6379?tls_cert=" + f.ClientCert:                     "go together",
		"rediss-sentinel://h:26379/m?tls_ca=/nonexistent/ca.pem":       "tls_ca",
		"rediss-cluster://h:7000?tls_ca=" + notPEM:                     "no PEM certificate",
		"rediss://h:6379?tls_cert=" + f.CA + "&tls_key=" + f.ClientKey: "tls_cert/tls_key",
		"rediss-cluster://h:7000/2":                                    "no database",
		"rediss-cluster://h:7000?db=1":                                 "no database",
		"rediss-sentinel://h:26379":                                    "master name",
		"rediss-memcache://h:1":                                        "scheme",
	} {
		if _, err := Dial(url); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Dial(%q) = %v, want an error naming %q", url, err, want)
		}
	}
}

// One redis-server on TLS only, requiring a client certificate: the store
// works through rediss:// with the URL's CA and certificate, and without
// the CA the server's certificate is not trusted.
func TestRedis_tls_single_server_with_a_client_certificate(t *testing.T) {
	f := makeTLSFiles(t)
	port := testenv.FreePort(t)
	p := startTLS(t, f, port, append(f.serverArgs(port), "--save", "", "--appendonly", "no", "--dir", t.TempDir())...)
	s := dialT(t, "rediss://"+p.Addr+"?"+f.query())
	roundTrip(t, s, "single")
	bare := dialT(t, "rediss://"+p.Addr+"?tls_cert="+f.ClientCert+"&tls_key="+f.ClientKey)
	if _, _, err := bare.Claim(context.Background(), claimRec("x", "o"), time.Hour); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("claim trusting only the system roots: %v, want a certificate error", err)
	}
}

// A primary, its replica and three sentinels, every link on TLS: a claim
// through rediss-sentinel:// waits for the replica (wait_replicas=1) and
// is on it when it returns.
func TestRedis_tls_sentinel_claim_is_on_the_replica(t *testing.T) {
	f := makeTLSFiles(t)
	dir := t.TempDir()
	data := func(name string) []string {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return []string{"--save", "", "--appendonly", "no", "--dir", d}
	}
	pp, rp := testenv.FreePort(t), testenv.FreePort(t)
	startTLS(t, f, pp, append(f.serverArgs(pp), data("primary")...)...)
	replica := startTLS(t, f, rp, append(append(f.serverArgs(rp), data("replica")...), "--replicaof", "127.0.0.1", strconv.Itoa(pp))...)
	rc := redis.NewClient(&redis.Options{Addr: replica.Addr, TLSConfig: f.config(t)})
	defer rc.Close()
	testenv.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
		info, err := rc.Info(context.Background(), "replication").Result()
		if err != nil || !strings.Contains(info, "master_link_status:up") {
			return fmt.Errorf("replica not in sync over TLS (%v)", err)
		}
		return nil
	})
	var sentinels []string
	for i := range 3 {
		sp := testenv.FreePort(t)
		conf := filepath.Join(dir, fmt.Sprintf("sentinel%d.conf", i))
		text := fmt.Sprintf("port 0\ntls-port %d\ntls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\ntls-auth-clients yes\ntls-replication yes\n"+
			"bind 127.0.0.1\ndir %s\nsentinel monitor mymaster 127.0.0.1 %d 2\nsentinel down-after-milliseconds mymaster 300\n",
			sp, f.Cert, f.Key, f.CA, dir, pp)
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		sn := startTLS(t, f, sp, conf, "--sentinel")
		sentinels = append(sentinels, sn.Addr)
		sc := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr, TLSConfig: f.config(t)})
		testenv.Eventually(t, 30*time.Second, 50*time.Millisecond, func() error {
			r, err := sc.Replicas(context.Background(), "mymaster").Result()
			if err != nil || len(r) == 0 {
				return fmt.Errorf("sentinel %s does not know the replica yet (%v)", sn.Addr, err)
			}
			return nil
		})
		sc.Close()
	}
	s := dialT(t, "rediss-sentinel://"+strings.Join(sentinels, ",")+"/mymaster?wait_replicas=1&"+f.query())
	roundTrip(t, s, "sentinel")
	for _, k := range s.scriptKeys("sentinel-a", "call-sentinel-a") {
		if n, err := rc.Exists(context.Background(), k).Result(); err != nil || n != 1 {
			t.Fatalf("replica lacks %s after the claim returned (n=%d err=%v)", k, n, err)
		}
	}
}

// Three cluster nodes on TLS only, their bus on TLS too: every script runs
// through rediss-cluster:// (the keys' one slot is on one of them).
func TestRedis_tls_cluster_scripts_run(t *testing.T) {
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Fatalf("redis-cli not found in PATH (apt-get install redis-tools): %v", err)
	}
	f := makeTLSFiles(t)
	dir := t.TempDir()
	var addrs []string
	for i := range 3 {
		p, bus := testenv.FreePort(t), testenv.FreePort(t)
		d := filepath.Join(dir, strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		n := startTLS(t, f, p, append(f.serverArgs(p), "--save", "", "--appendonly", "no", "--dir", d, "--cluster-enabled", "yes", "--tls-cluster", "yes",
			"--cluster-port", strconv.Itoa(bus), "--cluster-config-file", filepath.Join(d, "nodes.conf"), "--cluster-node-timeout", "2000")...)
		addrs = append(addrs, n.Addr)
	}
	args := append([]string{"--tls", "--cacert", f.CA, "--cert", f.ClientCert, "--key", f.ClientKey, "--cluster", "create"}, addrs...)
	if out, err := exec.Command("redis-cli", append(args, "--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create over TLS: %v\n%s", err, out)
	}
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a, TLSConfig: f.config(t)})
		testenv.Eventually(t, 30*time.Second, 50*time.Millisecond, func() error {
			info, err := c.ClusterInfo(context.Background()).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				return fmt.Errorf("cluster node %s not ok yet (%v)", a, err)
			}
			return nil
		})
		c.Close()
	}
	s := dialT(t, "rediss-cluster://"+strings.Join(addrs, ",")+"?"+f.query())
	roundTrip(t, s, "cluster")
}

// tlsOf is the TLS config of s's client (nil: plain TCP).
func tlsOf(s *Redis) *tls.Config {
	switch c := s.Client().(type) {
	case *redis.Client:
		return c.Options().TLSConfig
	case *redis.ClusterClient:
		return c.Options().TLSConfig
	}
	return nil
}

// roundTrip claims, completes and reads back key-a, and releases key-b.
func roundTrip(t *testing.T, s *Redis, key string) {
	t.Helper()
	ctx := context.Background()
	if _, claimed, err := s.Claim(ctx, claimRec(key+"-a", "o"), time.Hour); err != nil || !claimed {
		t.Fatalf("claim: claimed=%v err=%v", claimed, err)
	}
	if err := s.Complete(ctx, key+"-a", "o", true, []byte(`{"n":1}`), "", time.Hour); err != nil {
		t.Fatalf("complete: %v", err)
	}
	got, found, err := s.Get(ctx, key+"-a")
	if err != nil || !found || got.State != Completed || string(got.Result) != `{"n":1}` {
		t.Fatalf("get: %+v found=%v err=%v", got, found, err)
	}
	if _, claimed, err := s.Claim(ctx, claimRec(key+"-b", "o"), time.Hour); err != nil || !claimed {
		t.Fatalf("claim b: %v %v", claimed, err)
	}
	if err := s.Release(ctx, key+"-b", "o"); err != nil {
		t.Fatalf("release: %v", err)
	}
}
