package run

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/natsproc"
)

// clusterReplicas is the replicas of every stream and bucket on the bench's
// three-node cluster.
const clusterReplicas = 3

// openBenchCluster starts three nats-server processes (serverBin, or the
// nats-server the module requires built into dir) clustered by routes, as
// `toolgate chaos --topology cluster` does, waits until their JetStream is
// ready, and points the rig at all three with R3 streams and buckets; the
// counters are every node's, read from its monitoring port and summed.
func openBenchCluster(b *benchNATS, serverBin, dir string, partitions int) (*benchNATS, error) {
	bin, err := serverBinary(serverBin, dir)
	if err != nil {
		return nil, err
	}
	c, err := natsproc.StartCluster(bin, filepath.Join(dir, "nats"), partitions)
	if c != nil {
		b.close = func() { c.Stop(10 * time.Second) }
	}
	if err == nil {
		err = c.WaitHealthy(time.Minute)
	}
	if err != nil {
		b.close()
		return nil, fmt.Errorf("bench: --nats %s: %w", natsCluster, err)
	}
	mon := bench.ClusterMonitor{}
	for _, n := range c.Nodes() {
		mon.Nodes = append(mon.Nodes, bench.ClusterNode{Name: n.Name(), URL: n.MonitorURL(), PID: n.PID()})
		b.opts.NATSPIDs = append(b.opts.NATSPIDs, n.PID())
	}
	b.place = bench.NATSCluster
	b.opts.NATSURL, b.opts.Counters, b.opts.Replicas = c.URLs(), mon, clusterReplicas
	return b, nil
}

// serverBinary is serverBin (--nats-server), or the nats-server the module
// requires built into dir.
func serverBinary(serverBin, dir string) (string, error) {
	if serverBin != "" {
		return serverBin, nil
	}
	fmt.Println("building the nats-server the module requires (go build; --nats-server BIN skips it)")
	return natsproc.Build(dir)
}
