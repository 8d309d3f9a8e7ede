package natsproc

import (
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/natsmap"
)

// Server is one nats-server process: a node of StartCluster's without
// routes, on a free client port and a free monitoring port, with
// JetStream on file storage under its directory. `toolgate bench --nats
// embedded-process` runs the server this way, so that the nats-server's
// memory and CPU can be read apart from toolgate's.
type Server struct{ c *Cluster }

// StartServer starts bin (of the version the project embeds) with its
// store, configuration and log under dir, and returns once its /healthz
// says JetStream is ready.
func StartServer(bin, dir string, partitions int) (*Server, error) {
	if err := Check(bin); err != nil {
		return nil, err
	}
	p, err := ports(2)
	if err != nil {
		return nil, err
	}
	n := &Node{name: "nats", port: p[0], monitor: p[1]}
	if err := n.configure(dir, natsmap.Conf(partitions)); err != nil {
		return nil, err
	}
	s := &Server{c: &Cluster{bin: bin, nodes: []*Node{n}}}
	if err := s.c.Start(0); err != nil {
		return nil, err
	}
	if err := s.c.WaitHealthy(30 * time.Second); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%w (log: %s)", err, n.log)
	}
	return s, nil
}

// URL is the client URL.
func (s *Server) URL() string { return s.c.URLs() }

// MonitorURL is the monitoring port's URL (/varz, /healthz).
func (s *Server) MonitorURL() string { return s.c.nodes[0].MonitorURL() }

// PID is the process id while it runs, else 0.
func (s *Server) PID() int { return s.c.nodes[0].PID() }

// Stop ends the server: SIGTERM, SIGKILL after 10 s.
func (s *Server) Stop() { s.c.Stop(10 * time.Second) }
