package testenv

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/toolgate/toolgate/internal/natsmap/embedded"
)

// NATSOptions configures StartNATS. StoreDir is required; the server keeps
// its JetStream store there, so Restart finds its streams and consumers.
type NATSOptions struct {
	StoreDir string
	// Adjust, if set, changes the server options before the first start
	// (users, limits). Restart reuses the adjusted options.
	Adjust func(*server.Options)
	// Partitions, when above 1, maps the claimed subjects to that many
	// partitions (natsmap.Apply), as a toolgate server with --partitions
	// is configured; kept across restarts.
	Partitions int
}

// NATS is an embedded nats-server with JetStream on file storage, on a free
// port chosen at the first start and kept across restarts.
type NATS struct {
	opts  server.Options
	parts int
	srv   *server.Server
}

// StartNATS starts an embedded nats-server with JetStream on 127.0.0.1, a
// free port and o.StoreDir, and returns once it accepts connections. It
// needs no *testing.T: tests, the bench and chaos use it alike.
func StartNATS(o NATSOptions) (*NATS, error) {
	if o.StoreDir == "" {
		return nil, errors.New("testenv: NATSOptions.StoreDir is required")
	}
	n := &NATS{opts: server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: o.StoreDir,
		MaxPayload: 16 << 20, NoSigs: true, NoLog: true,
	}, parts: o.Partitions}
	if o.Adjust != nil {
		o.Adjust(&n.opts)
	}
	if err := n.start(); err != nil {
		return nil, err
	}
	if a, ok := n.srv.Addr().(*net.TCPAddr); ok {
		n.opts.Port = a.Port // a restart comes back on the same port
	}
	return n, nil
}

func (n *NATS) start() error {
	opts := n.opts // the server keeps a pointer to its options
	s, err := server.NewServer(&opts)
	if err != nil {
		return fmt.Errorf("testenv: nats-server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		return errors.New("testenv: nats-server did not accept connections within 30s")
	}
	if err := embedded.Apply(s, n.parts); err != nil {
		s.Shutdown()
		return err
	}
	n.srv = s
	return nil
}

// Server is the running server (nil after Shutdown).
func (n *NATS) Server() *server.Server { return n.srv }

// URL is the client URL, the same across restarts.
func (n *NATS) URL() string { return fmt.Sprintf("nats://%s:%d", n.opts.Host, n.opts.Port) }

// Restart shuts the server down cleanly (its store is flushed) and starts it
// again on the same port and store.
func (n *NATS) Restart() error {
	n.Shutdown()
	return n.start()
}

// Shutdown stops the server and waits until it has; calling it twice is fine.
func (n *NATS) Shutdown() {
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
		n.srv = nil
	}
}
