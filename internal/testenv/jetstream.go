// Package testenv starts the real components tests, the bench and chaos run
// against: an embedded nats-server with JetStream (StartNATS) and a real
// redis-server (StartRedis), each on a free port with its own directory.
// RunJetStream and RunRedis wrap them for tests and stop them in cleanup.
package testenv

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// RunJetStream starts an embedded nats-server with JetStream on a random
// port and a fresh store directory; adjust, if given, changes the options
// before it starts (users, limits). It shuts down in cleanup.
func RunJetStream(t testing.TB, adjust ...func(*server.Options)) *server.Server {
	t.Helper()
	n, err := StartNATS(NATSOptions{StoreDir: t.TempDir(), Adjust: func(o *server.Options) {
		// As nats-server's own test options.
		o.DisableShortFirstPing = true
		o.Cluster.PoolSize = -1
		o.Cluster.Compression.Mode = server.CompressionOff
		o.LeafNode.Compression.Mode = server.CompressionOff
		for _, f := range adjust {
			f(o)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	return n.Server()
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
