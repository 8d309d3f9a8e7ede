package natsproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/natsmap"
	"github.com/toolgate/toolgate/internal/testenv"
)

// Node is one nats-server process of a Cluster, on fixed client and route
// ports and its own store, so a restart rejoins as the same node.
type Node struct {
	name, conf, log string
	port, monitor   int
	cmd             *exec.Cmd
	done            chan struct{}
	running         atomic.Int64 // the process id while it runs, else 0 (read by the RSS sampler)
}

// Cluster is three nats-server processes joined by routes, each with
// JetStream on file storage.
type Cluster struct {
	bin   string
	nodes []*Node
}

// Name is the node's server name (nats-0, nats-1, nats-2), as a stream's
// cluster info names its leader.
func (n *Node) Name() string { return n.name }

// URL is the node's client URL.
func (n *Node) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.port) }

// MonitorURL is the node's monitoring port (/varz, /jsz, /healthz).
func (n *Node) MonitorURL() string { return fmt.Sprintf("http://127.0.0.1:%d", n.monitor) }

// PID is the node's process id while it runs, else 0.
func (n *Node) PID() int { return int(n.running.Load()) }

// Nodes are the cluster's nodes, in the order of their names.
func (c *Cluster) Nodes() []*Node { return c.nodes }

// StartCluster writes three configurations under dir and starts the nodes
// of bin (of the version the project embeds); it returns once they run
// (WaitHealthy waits until their JetStream is ready). On an error the
// Cluster returned, if any, holds the nodes started: Stop them.
func StartCluster(bin, dir string, partitions int) (*Cluster, error) {
	if err := Check(bin); err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin}
	p, err := ports(9)
	if err != nil {
		return nil, err
	}
	clientPorts, routePorts, monitorPorts := p[0:3], p[3:6], p[6:9]
	var routes []string
	for _, rp := range routePorts {
		routes = append(routes, fmt.Sprintf("\"nats://127.0.0.1:%d\"", rp))
	}
	for i := range 3 {
		n := &Node{name: fmt.Sprintf("nats-%d", i), port: clientPorts[i], monitor: monitorPorts[i]}
		cluster := fmt.Sprintf("cluster { name: toolgate, listen: \"127.0.0.1:%d\", routes: [%s] }\n", routePorts[i], strings.Join(routes, ", ")) + natsmap.Conf(partitions)
		if err := n.configure(dir, cluster); err != nil {
			return c, err
		}
		c.nodes = append(c.nodes, n)
		if err := c.Start(i); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Start runs node i (again).
func (c *Cluster) Start(i int) error {
	n := c.nodes[i]
	logf, err := os.OpenFile(n.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("natsproc: %w", err)
	}
	cmd := exec.Command(c.bin, "-c", n.conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = endWithParent()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("natsproc: start %s: %w", n.name, err)
	}
	done := make(chan struct{})
	n.running.Store(int64(cmd.Process.Pid))
	go func() { _ = cmd.Wait(); n.running.Store(0); logf.Close(); close(done) }()
	n.cmd, n.done = cmd, done
	return nil
}

// URLs is the client URL list of every node, comma separated, as a stage's
// TOOLGATE_NATS_URL takes it.
func (c *Cluster) URLs() string {
	var urls []string
	for _, n := range c.nodes {
		urls = append(urls, n.URL())
	}
	return strings.Join(urls, ",")
}

// Index is the node named name, or -1.
func (c *Cluster) Index(name string) int {
	for i, n := range c.nodes {
		if n.name == name {
			return i
		}
	}
	return -1
}

// Kill SIGKILLs node i and waits until it is gone.
func (c *Cluster) Kill(i int) {
	n := c.nodes[i]
	if n.cmd != nil {
		_ = n.cmd.Process.Signal(syscall.SIGKILL)
		<-n.done
	}
}

// Pause stops node i (SIGSTOP): its connections stay open and it answers
// nothing, as a node cut off by a partition; Resume continues it.
func (c *Cluster) Pause(i int) { _ = c.nodes[i].cmd.Process.Signal(syscall.SIGSTOP) }

func (c *Cluster) Resume(i int) { _ = c.nodes[i].cmd.Process.Signal(syscall.SIGCONT) }

// Stop ends every node: SIGCONT (a paused node), SIGTERM, SIGKILL after
// grace.
func (c *Cluster) Stop(grace time.Duration) {
	for _, n := range c.nodes {
		if n.cmd == nil {
			continue
		}
		_ = n.cmd.Process.Signal(syscall.SIGCONT)
		_ = n.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, n := range c.nodes {
		if n.cmd == nil {
			continue
		}
		select {
		case <-n.done:
		case <-time.After(grace):
			_ = n.cmd.Process.Kill()
			<-n.done
		}
	}
}

// WaitHealthy waits up to total until every node's /healthz answers 200:
// it runs, and its JetStream (meta group and every stream and consumer it
// holds) is current.
func (c *Cluster) WaitHealthy(total time.Duration) error {
	hc := http.Client{Timeout: 2 * time.Second}
	return testenv.Poll(total, 200*time.Millisecond, func() error {
		for _, n := range c.nodes {
			resp, err := hc.Get(n.MonitorURL() + "/healthz")
			if err != nil {
				return fmt.Errorf("natsproc: %s: %w", n.name, err)
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("natsproc: %s /healthz: %s %s", n.name, resp.Status, body)
			}
		}
		return nil
	})
}

// StreamLeader is the name of the node leading stream, "" when it has
// none.
func StreamLeader(ctx context.Context, js jetstream.JetStream, stream string) (string, error) {
	ictx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := js.Stream(ictx, stream)
	if err != nil {
		return "", err
	}
	info := st.CachedInfo()
	if info.Cluster == nil {
		return "", errors.New("natsproc: stream info has no cluster")
	}
	return info.Cluster.Leader, nil
}
