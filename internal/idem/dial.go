package idem

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Dial opens the Redis store at raw, one of
//
//	redis://[[user]:password@]host:6379[/db]            one server
//	redis-sentinel://[[user]:password@]h1:26379,h2:26379/MASTER[?db=N]
//	redis-cluster://[[user]:password@]h1:7000,h2:7001
//
// each with TLS as rediss://, rediss-sentinel://, rediss-cluster:// (or
// tls=true), taking tls_ca, tls_cert, tls_key and tls_server_name
// (dial_tls.go); and, on any of them, wait_replicas=auto|N and
// wait_timeout=DURATION (see Redis.waitFor). Nothing is dialled yet: the
// client connects on first use.
func Dial(raw string) (*Redis, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("idem: redis url: %w", err)
	}
	q := u.Query()
	w := waitConf{replicas: -1, timeout: time.Second}
	if v := q.Get("wait_replicas"); v != "" && v != "auto" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 100 {
			return nil, fmt.Errorf("idem: redis url: wait_replicas %q: want auto or a number 0..100", v)
		}
		w.replicas = n
	}
	if v := q.Get("wait_timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > 2*time.Second {
			return nil, fmt.Errorf("idem: redis url: wait_timeout %q: want a duration up to 2s (below the client read timeout), e.g. 500ms", v)
		}
		w.timeout = d
	}
	q.Del("wait_replicas")
	q.Del("wait_timeout")
	scheme, tc, err := takeTLS(u, q)
	if err != nil {
		return nil, err
	}
	u.Scheme = scheme
	u.RawQuery = q.Encode()
	var c redis.UniversalClient
	cluster := false
	switch u.Scheme {
	case "redis", "rediss", "unix":
		opt, err := redis.ParseURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("idem: redis url: %w", err)
		}
		if tc.on {
			if opt.TLSConfig, err = tc.apply(opt.TLSConfig); err != nil {
				return nil, err
			}
		}
		c = redis.NewClient(opt)
	case "redis-sentinel":
		opt, err := sentinelOptions(u)
		if err != nil {
			return nil, err
		}
		if tc.on { // sentinels and data nodes alike
			if opt.TLSConfig, err = tc.apply(nil); err != nil {
				return nil, err
			}
		}
		c = redis.NewFailoverClient(opt)
	case "redis-cluster":
		addrs, err := hosts(u.Host)
		if err != nil {
			return nil, err
		}
		if len(u.Query()) > 0 || strings.Trim(u.Path, "/") != "" {
			return nil, errors.New("idem: redis-cluster url takes no database or options but wait_replicas, wait_timeout and the tls ones (a cluster has only db 0)")
		}
		user, pass := creds(u)
		opt := &redis.ClusterOptions{Addrs: addrs, Username: user, Password: pass}
		if tc.on {
			if opt.TLSConfig, err = tc.apply(nil); err != nil {
				return nil, err
			}
		}
		c = redis.NewClusterClient(opt)
		cluster = true
	default:
		return nil, fmt.Errorf("idem: redis url scheme %q: want redis, rediss, redis-sentinel, rediss-sentinel, redis-cluster or rediss-cluster", u.Scheme)
	}
	s := NewRedis(c)
	s.wait = w
	if cluster {
		// One hash tag for every key: each script's KEYS (record and call
		// binding) land in one slot. See keys.go.
		s.prefix = clusterPrefix
	}
	return s, nil
}

func sentinelOptions(u *url.URL) (*redis.FailoverOptions, error) {
	addrs, err := hosts(u.Host)
	if err != nil {
		return nil, err
	}
	master := strings.Trim(u.Path, "/")
	if master == "" || strings.Contains(master, "/") {
		return nil, errors.New("idem: redis-sentinel url needs the master name as its path: redis-sentinel://h1:26379,h2:26379/mymaster")
	}
	user, pass := creds(u)
	opt := &redis.FailoverOptions{MasterName: master, SentinelAddrs: addrs, Username: user, Password: pass}
	q := u.Query()
	if v := q.Get("db"); v != "" {
		db, err := strconv.Atoi(v)
		if err != nil || db < 0 {
			return nil, fmt.Errorf("idem: redis-sentinel url: db %q: want a number", v)
		}
		opt.DB = db
	}
	opt.SentinelPassword = q.Get("sentinel_password")
	for k := range q {
		if k != "db" && k != "sentinel_password" {
			return nil, fmt.Errorf("idem: redis-sentinel url: unknown option %q (db, sentinel_password, wait_replicas, wait_timeout)", k)
		}
	}
	return opt, nil
}

// hosts splits "h1:1,h2:2"; every entry needs a host and a port.
func hosts(s string) ([]string, error) {
	var out []string
	for _, h := range strings.Split(s, ",") {
		host, port, err := net.SplitHostPort(h)
		if err != nil || host == "" || port == "" {
			return nil, fmt.Errorf("idem: redis url: address %q: want host:port", h)
		}
		out = append(out, h)
	}
	return out, nil
}

func creds(u *url.URL) (string, string) {
	if u.User == nil {
		return "", ""
	}
	p, _ := u.User.Password()
	return u.User.Username(), p
}
