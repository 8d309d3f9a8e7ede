package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
)

// NATSServer is one nats-server process: a node of startNATSCluster's
// without routes, on a free client port and a free monitoring port, with
// JetStream on file storage under its directory. `toolgate bench --nats
// embedded-process` runs the server this way, so that the nats-server's
// memory and CPU can be read apart from toolgate's.
type NATSServer struct{ c *natsCluster }

// StartNATSServer starts bin (of the version the project embeds) with its
// store, configuration and log under dir, and returns once its /healthz
// says JetStream is ready.
func StartNATSServer(bin, dir string) (*NATSServer, error) {
	if err := checkNATSServer(bin); err != nil {
		return nil, err
	}
	port, err := testenv.Port()
	if err != nil {
		return nil, err
	}
	monitor, err := testenv.Port()
	if err != nil {
		return nil, err
	}
	n := &natsNode{name: "nats", port: port, monitor: monitor}
	store := filepath.Join(dir, n.name)
	if err := os.MkdirAll(store, 0o755); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	n.conf, n.log = filepath.Join(dir, n.name+".conf"), filepath.Join(dir, n.name+".log")
	// The options of the embedded server (testenv.StartNATS).
	text := fmt.Sprintf("server_name: %q\nlisten: \"127.0.0.1:%d\"\nhttp: \"127.0.0.1:%d\"\nmax_payload: 16MB\njetstream { store_dir: %q }\n",
		n.name, n.port, n.monitor, store)
	if err := os.WriteFile(n.conf, []byte(text), 0o644); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	s := &NATSServer{c: &natsCluster{bin: bin, nodes: []*natsNode{n}}}
	if err := s.c.start(0); err != nil {
		return nil, err
	}
	if err := s.c.waitHealthy(30 * time.Second); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%w (log: %s)", err, n.log)
	}
	return s, nil
}

// URL is the client URL.
func (s *NATSServer) URL() string { return s.c.URLs() }

// MonitorURL is the monitoring port's URL (/varz, /healthz).
func (s *NATSServer) MonitorURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d", s.c.nodes[0].monitor)
}

// PID is the process id while it runs, else 0.
func (s *NATSServer) PID() int { return int(s.c.nodes[0].running.Load()) }

// Stop ends the server: SIGTERM, SIGKILL after 10 s.
func (s *NATSServer) Stop() { s.c.stop(10 * time.Second) }
