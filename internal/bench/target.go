package bench

import (
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/metrics"
)

// Target is a running pipeline to measure: a connection to its NATS, the
// embedded server itself (for the bytes clients sent it), the pid of its
// redis-server (0: not measured) and the stages' metrics.
type Target struct {
	NC       *nats.Conn
	JS       jetstream.JetStream
	Server   *server.Server
	RedisPID int
	Metrics  *metrics.Metrics
}

func (t Target) varz() (*server.Varz, error) { return t.Server.Varz(&server.VarzOptions{}) }

// cpu is this process's CPU time plus redis-server's.
func (t Target) cpu() time.Duration { return Self().CPU + ProcCPU(t.RedisPID) }
