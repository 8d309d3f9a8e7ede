package bench

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/metrics"
)

// Target is a running pipeline to measure: a connection to its NATS, the
// server's counters (for the bytes clients sent it), the pids of its
// redis-server and of the nats-server child processes (none: not measured,
// or in this process) and the stages' metrics.
type Target struct {
	NC       *nats.Conn
	JS       jetstream.JetStream
	Counters Counters
	RedisPID int
	NATSPIDs []int
	Metrics  *metrics.Metrics
}

// varz reads the counters; unavailable ones read as zero (the report says
// so instead of printing the differences).
func (t Target) varz(ctx context.Context) (*server.Varz, error) {
	v, err := t.Counters.Varz(ctx)
	if errors.Is(err, ErrNoCounters) {
		return &server.Varz{}, nil
	}
	return v, err
}

// CPU is this process's CPU time plus redis-server's and, when they run as
// child processes, the nats-servers': with the server embedded its CPU is
// in this process's, so the sum means the same either way.
func (t Target) CPU() time.Duration {
	c := Self().CPU + ProcCPU(t.RedisPID)
	for _, pid := range t.NATSPIDs {
		c += ProcCPU(pid)
	}
	return c
}

// NATSPeakRSS is the peak RSS of the nats-server child processes, summed.
func (t Target) NATSPeakRSS() int64 {
	var sum int64
	for _, pid := range t.NATSPIDs {
		sum += ProcPeakRSS(pid)
	}
	return sum
}
