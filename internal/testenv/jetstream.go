// Package testenv starts the real components tests run against: an embedded
// nats-server with JetStream and a real redis-server, each on a free port
// with its own temporary directory, stopped in cleanup.
package testenv

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	natsserver "github.com/nats-io/nats-server/v2/test"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// RunJetStream starts an embedded nats-server with JetStream on a random
// port and a fresh store directory; adjust, if given, changes the options
// before it starts (users, limits).
func RunJetStream(t testing.TB, adjust ...func(*server.Options)) *server.Server {
	t.Helper()
	opts := natsserver.DefaultTestOptions
	opts.Port = -1
	opts.JetStream = true
	opts.StoreDir = t.TempDir()
	opts.MaxPayload = 16 << 20
	for _, f := range adjust {
		f(&opts)
	}
	s := natsserver.RunServer(&opts)
	t.Cleanup(s.Shutdown)
	return s
}

// Connect opens a client connection and a JetStream context to s, closed in
// cleanup.
func Connect(t testing.TB, s *server.Server) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}
