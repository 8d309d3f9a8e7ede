package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsFlag adds --nats to fs, defaulting to TOOLGATE_NATS_URL.
func natsFlag(fs *flag.FlagSet) *string {
	return fs.String("nats", env("TOOLGATE_NATS_URL", nats.DefaultURL), "NATS server URL (TOOLGATE_NATS_URL)")
}

func connect(url string) (*nats.Conn, jetstream.JetStream, error) {
	opts := []nats.Option{nats.Name("toolgate cli"), nats.Timeout(5 * time.Second)}
	if user := env("TOOLGATE_NATS_USER", ""); user != "" {
		// A least-privilege deployment (internal/authz): operators connect as admin.
		opts = append(opts, nats.UserInfo(user, env("TOOLGATE_NATS_PASSWORD", "")))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to NATS at %s: %w (is `toolgate up` running? set TOOLGATE_NATS_URL)", url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

func timeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// openBucket connects to url and opens one key-value bucket, for a command
// that reads or writes it. done closes the connection and the deadline.
func openBucket(url, bucket string) (ctx context.Context, kv jetstream.KeyValue, done func(), err error) {
	nc, js, err := connect(url)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := timeout()
	done = func() { cancel(); nc.Close() }
	if kv, err = js.KeyValue(ctx, bucket); err != nil {
		done()
		return nil, nil, nil, fmt.Errorf("bucket %s: %w", bucket, err)
	}
	return ctx, kv, done, nil
}
