package idem

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestDial_url_forms(t *testing.T) {
	s, err := Dial("redis-sentinel://:pw@h1:26379,h2:26380/mymaster?db=2&wait_replicas=1&wait_timeout=300ms")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.wait.replicas != 1 || s.wait.timeout != 300*time.Millisecond || s.prefix != "toolgate:" {
		t.Fatalf("sentinel: wait=%+v prefix=%q", s.wait, s.prefix)
	}
	if _, ok := s.Client().(*redis.Client); !ok {
		t.Fatalf("sentinel client is %T, want the failover *redis.Client", s.Client())
	}
	c, err := Dial("redis-cluster://h1:7000,h2:7001")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.Client().(*redis.ClusterClient); !ok || c.prefix != clusterPrefix || c.wait.replicas != -1 {
		t.Fatalf("cluster: %T prefix=%q wait=%+v", c.Client(), c.prefix, c.wait)
	}
	r, err := Dial("redis://127.0.0.1:6379/0?wait_replicas=0")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.wait.replicas != 0 || r.prefix != "toolgate:" {
		t.Fatalf("single: wait=%+v prefix=%q", r.wait, r.prefix)
	}
}

func TestDial_rejects_bad_urls_with_a_reason(t *testing.T) {
	for url, want := range map[string]string{
		"redis-sentinel://h1:26379":                          "master name",
		"redis-sentinel://h1:26379/m?db=x":                   "db",
		"redis-sentinel://h1:26379/m?bogus=1":                "unknown option",
		"redis-sentinel://h1,h2:26379/m":                     "host:port",
		"redis-cluster://h1:7000/3":                          "no database",
		"redis://h:6379?wait_replicas=many":                  "wait_replicas",
		"redis://h:6379?wait_replicas=-1":                    "wait_replicas",
		"redis://h:6379?wait_timeout=1h":                     "wait_timeout",
		"memcache://h:1":                                     "scheme",
		"redis://h:6379?nonsense=1":                          "nonsense",
		"redis-sentinel://\x00":                              "redis url",
		"redis-cluster://" + strings.Repeat("h:1,", 3) + ",": "redis url",
	} {
		if _, err := Dial(url); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Dial(%q) = %v, want an error naming %q", url, err, want)
		}
	}
}
