package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/benchrig"
	"github.com/toolgate/toolgate/internal/cli/cmdutil"
	"github.com/toolgate/toolgate/internal/natsproc"
)

// The values of bench --nats beside a URL.
const (
	natsEmbedded = "embedded"         // in this process, as always
	natsChild    = "embedded-process" // a nats-server child process
	natsCluster  = "cluster"          // three nats-server child processes, R3
)

// benchNATS is where the bench's nats-server runs (--nats), and how the rig
// reaches it and reads its counters.
type benchNATS struct {
	place  bench.NATSPlace
	server *natsproc.Server // natsChild
	opts   benchrig.Options // NATSURL, NATSOpts, Counters, NATSPIDs, Replicas
	close  func()
}

// openBenchNATS reads --nats: embedded (nothing to do: the rig embeds the
// server), embedded-process (start serverBin, or the nats-server the module
// requires built into dir, as make chaos does), cluster (three of them
// clustered, every stream and bucket R3: openBenchCluster), or the URL of an external
// server, connected to as the other commands connect (cmdutil.CredentialsFor:
// the URL's user, TOOLGATE_NATS_USER and TOOLGATE_NATS_PASSWORD, or the
// admin's password file), whose counters are read from monitor.
func openBenchNATS(ctx context.Context, where, monitor, serverBin, dir string, partitions int) (*benchNATS, error) {
	b := &benchNATS{close: func() {}}
	switch strings.TrimSpace(where) {
	case natsEmbedded, "":
		if monitor != "" {
			return nil, cmdutil.UsageError("--nats-monitor is for --nats URL (the embedded server's counters are read in this process)")
		}
		return b, nil
	case natsChild:
		if monitor != "" {
			return nil, cmdutil.UsageError("--nats-monitor is for --nats URL (the child's counters are read from its own monitoring port)")
		}
		bin, err := serverBinary(serverBin, dir)
		if err != nil {
			return nil, err
		}
		s, err := natsproc.StartServer(bin, dir, partitions)
		if err != nil {
			return nil, fmt.Errorf("bench: --nats %s: %w", natsChild, err)
		}
		b.place, b.server, b.close = bench.NATSChild, s, s.Stop
		b.opts.NATSURL, b.opts.Counters, b.opts.NATSPIDs = s.URL(), bench.Monitor{URL: s.MonitorURL()}, []int{s.PID()}
		return b, nil
	case natsCluster:
		if monitor != "" {
			return nil, cmdutil.UsageError("--nats-monitor is for --nats URL (the nodes' counters are read from their own monitoring ports)")
		}
		return openBenchCluster(b, serverBin, dir, partitions)
	}
	if serverBin != "" {
		return nil, cmdutil.UsageError("--nats-server is for --nats %s or %s", natsChild, natsCluster)
	}
	c, done, err := bench.OpenCounters(ctx, monitor)
	if err != nil {
		return nil, err
	}
	b.place, b.close = bench.NATSExternal, done
	b.opts.NATSURL, b.opts.Counters = where, c
	if cr := cmdutil.CredentialsFor(where, authz.Admin, os.Getenv); cr.Password != nil {
		b.opts.NATSOpts = []nats.Option{nats.UserInfo(cr.User, *cr.Password)}
	}
	return b, nil
}

// describe is the line the bench prints about the server before step 1.
func (b *benchNATS) describe() string {
	switch b.place {
	case bench.NATSChild:
		return fmt.Sprintf("nats-server: a child process (pid %d, %s), its memory and CPU read apart", b.opts.NATSPIDs[0], b.opts.NATSURL)
	case bench.NATSCluster:
		return fmt.Sprintf("nats-server: a 3-node cluster of child processes (pids %v, %s), every stream and bucket R3; their memory and CPU read apart, their counters from each node's monitoring port and summed", b.opts.NATSPIDs, b.opts.NATSURL)
	case bench.NATSExternal:
		return fmt.Sprintf("nats-server: external at %s (not measured; toolgate's streams made there are deleted at the end)", b.opts.NATSURL)
	}
	return "nats-server: embedded in this process (its memory and CPU in the process's)"
}

// withRig copies where the server is into the rig's options.
func (b *benchNATS) withRig(o benchrig.Options) benchrig.Options {
	o.NATSURL, o.NATSOpts, o.Counters, o.NATSPIDs, o.Replicas = b.opts.NATSURL, b.opts.NATSOpts, b.opts.Counters, b.opts.NATSPIDs, b.opts.Replicas
	return o
}

// noCounters is why the server's counters are unavailable, "" when they
// can be read (or fail otherwise: the step reading them then fails).
func noCounters(ctx context.Context, c bench.Counters) string {
	if c == nil {
		return ""
	}
	if _, err := c.Varz(ctx); errors.Is(err, bench.ErrNoCounters) {
		return err.Error()
	}
	return ""
}
