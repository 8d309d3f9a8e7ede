package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
)

func TestNATS_restart_keeps_port_and_streams(t *testing.T) {
	n, err := StartNATS(NATSOptions{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	url := n.URL()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	if err := n.Restart(); err != nil {
		t.Fatal(err)
	}
	if n.URL() != url {
		t.Fatalf("URL after restart = %s, want %s", n.URL(), url)
	}
	nc, err = nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ = jetstream.New(nc)
	if _, err := js.Stream(ctx, "T"); err != nil {
		t.Fatalf("stream after restart: %v", err)
	}
}

func TestRedis_durable_restart_keeps_writes_and_plain_keeps_none(t *testing.T) {
	for _, durable := range []bool{true, false} {
		r, err := StartRedis(RedisOptions{Dir: t.TempDir(), Durable: durable})
		if err != nil {
			t.Fatal(err)
		}
		c := redis.NewClient(&redis.Options{Addr: r.Addr})
		ctx := context.Background()
		if err := c.Set(ctx, "k", "v", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		pid := r.PID()
		if err := r.Restart(); err != nil {
			t.Fatal(err)
		}
		if r.PID() == pid {
			t.Fatalf("durable=%v: same pid after restart", durable)
		}
		n, err := c.Exists(ctx, "k").Result()
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int64{true: 1, false: 0}[durable]; n != want {
			t.Fatalf("durable=%v: key exists = %d after a SIGKILL restart, want %d", durable, n, want)
		}
		c.Close()
		r.Stop()
		r.Stop()
	}
}
