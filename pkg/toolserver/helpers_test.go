package toolserver

import (
	"context"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// replayConn connects to s and creates the bucket of the executors' records
// as `toolgate streams apply` declares it.
func replayConn(t *testing.T, s *server.Server) *nats.Conn {
	t.Helper()
	nc, js := testenv.Connect(t, s)
	for _, cfg := range streams.DefaultSettings().BucketConfigs() {
		if cfg.Bucket == streams.BucketExecReplay {
			if _, err := js.CreateOrUpdateKeyValue(context.Background(), cfg); err != nil {
				t.Fatal(err)
			}
			return nc
		}
	}
	t.Fatal("streams declares no bucket " + streams.BucketExecReplay)
	return nil
}

// replayBucket is the records bucket on nc.
func replayBucket(t *testing.T, nc *nats.Conn) jetstream.KeyValue {
	t.Helper()
	b, err := bindReplay(nc)
	if err != nil {
		t.Fatal(err)
	}
	return b.bound[0]
}

func jetstreamOf(nc *nats.Conn) (jetstream.JetStream, error) { return jetstream.New(nc) }
