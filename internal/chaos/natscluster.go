package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

// natsNode is one nats-server process of the cluster, on fixed client and
// route ports and its own store, so a restart rejoins as the same node.
type natsNode struct {
	name, conf, log string
	port, monitor   int
	cmd             *exec.Cmd
	done            chan struct{}
	running         atomic.Int64 // the process id while it runs, else 0 (read by the RSS sampler)
}

// natsCluster is three nats-server processes joined by routes, each with
// JetStream on file storage.
type natsCluster struct {
	bin   string
	nodes []*natsNode
}

// NATSServerVersion runs bin --version and returns the version it names
// (e.g. "v2.15.2").
func NATSServerVersion(bin string) (string, error) {
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("chaos: %s --version: %v: %s", bin, err, out)
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return "", fmt.Errorf("chaos: %s --version printed nothing", bin)
	}
	return f[len(f)-1], nil
}

// checkNATSServer refuses a nats-server binary of another version than the
// one the project embeds (server.VERSION): a run on another version says
// nothing about the one toolgate ships with.
func checkNATSServer(bin string) error {
	v, err := NATSServerVersion(bin)
	if err != nil {
		return err
	}
	if strings.TrimPrefix(v, "v") != strings.TrimPrefix(server.VERSION, "v") {
		return fmt.Errorf("chaos: %s is nats-server %s, the project embeds %s (build it: go build -o DIR/nats-server github.com/nats-io/nats-server/v2)", bin, v, server.VERSION)
	}
	return nil
}

// BuildNATSServer builds the nats-server the module requires into dir with
// `go build` (offline from the module cache) and returns its path.
func BuildNATSServer(dir string) (string, error) {
	p := filepath.Join(dir, "nats-server")
	cmd := exec.Command(goTool(), "build", "-o", p, "github.com/nats-io/nats-server/v2")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("chaos: go build nats-server: %v\n%s", err, out.String())
	}
	return p, nil
}

// startNATSCluster writes three configurations under dir and starts the
// nodes; it returns once a client reaches JetStream through them.
func startNATSCluster(bin, dir string) (*natsCluster, error) {
	c := &natsCluster{bin: bin}
	var clientPorts, routePorts, monitorPorts []int
	for range 3 {
		cp, err := testenv.Port()
		if err != nil {
			return nil, err
		}
		rp, err := testenv.Port()
		if err != nil {
			return nil, err
		}
		mp, err := testenv.Port()
		if err != nil {
			return nil, err
		}
		clientPorts, routePorts, monitorPorts = append(clientPorts, cp), append(routePorts, rp), append(monitorPorts, mp)
	}
	var routes []string
	for _, rp := range routePorts {
		routes = append(routes, fmt.Sprintf("\"nats://127.0.0.1:%d\"", rp))
	}
	for i := range 3 {
		n := &natsNode{name: fmt.Sprintf("nats-%d", i), port: clientPorts[i], monitor: monitorPorts[i]}
		store := filepath.Join(dir, n.name)
		if err := os.MkdirAll(store, 0o755); err != nil {
			return c, fmt.Errorf("chaos: %w", err)
		}
		n.conf, n.log = filepath.Join(dir, n.name+".conf"), filepath.Join(dir, n.name+".log")
		text := fmt.Sprintf("server_name: %q\nlisten: \"127.0.0.1:%d\"\nhttp: \"127.0.0.1:%d\"\nmax_payload: 16MB\n"+
			"jetstream { store_dir: %q }\ncluster { name: toolgate, listen: \"127.0.0.1:%d\", routes: [%s] }\n",
			n.name, n.port, n.monitor, store, routePorts[i], strings.Join(routes, ", "))
		if err := os.WriteFile(n.conf, []byte(text), 0o644); err != nil {
			return c, fmt.Errorf("chaos: %w", err)
		}
		c.nodes = append(c.nodes, n)
		if err := c.start(i); err != nil {
			return c, err
		}
	}
	return c, nil
}

// start runs node i (again).
func (c *natsCluster) start(i int) error {
	n := c.nodes[i]
	logf, err := os.OpenFile(n.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	cmd := exec.Command(c.bin, "-c", n.conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("chaos: start %s: %w", n.name, err)
	}
	done := make(chan struct{})
	n.running.Store(int64(cmd.Process.Pid))
	go func() { _ = cmd.Wait(); n.running.Store(0); logf.Close(); close(done) }()
	n.cmd, n.done = cmd, done
	return nil
}

// URLs is the client URL list of every node, comma separated, as a stage's
// TOOLGATE_NATS_URL takes it.
func (c *natsCluster) URLs() string {
	var urls []string
	for _, n := range c.nodes {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", n.port))
	}
	return strings.Join(urls, ",")
}

// index is the node named name, or -1.
func (c *natsCluster) index(name string) int {
	for i, n := range c.nodes {
		if n.name == name {
			return i
		}
	}
	return -1
}

// kill SIGKILLs node i and waits until it is gone.
func (c *natsCluster) kill(i int) {
	n := c.nodes[i]
	if n.cmd != nil {
		_ = n.cmd.Process.Signal(syscall.SIGKILL)
		<-n.done
	}
}

// pause stops node i (SIGSTOP): its connections stay open and it answers
// nothing, as a node cut off by a partition; resume continues it.
func (c *natsCluster) pause(i int) { _ = c.nodes[i].cmd.Process.Signal(syscall.SIGSTOP) }

func (c *natsCluster) resume(i int) { _ = c.nodes[i].cmd.Process.Signal(syscall.SIGCONT) }

// stop ends every node: SIGCONT (a paused node), SIGTERM, SIGKILL after
// grace.
func (c *natsCluster) stop(grace time.Duration) {
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

// waitHealthy waits up to total until every node's /healthz answers 200:
// it runs, and its JetStream (meta group and every stream and consumer it
// holds) is current.
func (c *natsCluster) waitHealthy(total time.Duration) error {
	hc := http.Client{Timeout: 2 * time.Second}
	return testenv.Poll(total, 200*time.Millisecond, func() error {
		for _, n := range c.nodes {
			resp, err := hc.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", n.monitor))
			if err != nil {
				return fmt.Errorf("chaos: %s: %w", n.name, err)
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("chaos: %s /healthz: %s %s", n.name, resp.Status, body)
			}
		}
		return nil
	})
}

// streamLeader is the name of the node leading stream, "" when it has
// none.
func streamLeader(ctx context.Context, js jetstream.JetStream, stream string) (string, error) {
	ictx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := js.Stream(ictx, stream)
	if err != nil {
		return "", err
	}
	info := st.CachedInfo()
	if info.Cluster == nil {
		return "", errors.New("chaos: stream info has no cluster")
	}
	return info.Cluster.Leader, nil
}
