package testenv

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// RunJetStreamCluster starts three JetStream servers joined by routes, as
// the NATS StatefulSet of deploy/ runs them, each with its own store
// directory, and waits for a meta leader. They shut down in cleanup.
func RunJetStreamCluster(t testing.TB) []*server.Server {
	t.Helper()
	var routes []string
	ports := make([]int, 3)
	for i := range ports {
		ports[i] = FreePort(t)
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	servers := make([]*server.Server, 3)
	for i := range servers {
		opts := &server.Options{
			ServerName: fmt.Sprintf("nats-%d", i), Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
			JetStream: true, StoreDir: t.TempDir(), MaxPayload: 16 << 20, DisableShortFirstPing: true,
		}
		opts.Cluster.Name, opts.Cluster.Host, opts.Cluster.Port = "toolgate", "127.0.0.1", ports[i]
		opts.Cluster.PoolSize = -1
		opts.Cluster.Compression.Mode = server.CompressionOff
		opts.Routes = server.RoutesFromStr(strings.Join(routes, ","))
		s, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatalf("nats-%d not ready", i)
		}
		t.Cleanup(s.Shutdown)
		servers[i] = s
	}
	Eventually(t, 20*time.Second, 50*time.Millisecond, func() error {
		for _, s := range servers {
			if s.JetStreamIsLeader() {
				return nil
			}
		}
		return fmt.Errorf("no JetStream meta leader")
	})
	return servers
}
