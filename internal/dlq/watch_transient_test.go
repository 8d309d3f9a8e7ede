package dlq

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The cluster chaos run's replay failed once with "dlq: watch results: nats:
// no responders available for request" while a restarted node caught up: a
// cluster's passing errors make the watch ask again until its deadline, and
// anything else still ends it.
func TestTransient_cluster_blips_are_asked_again_others_end_the_watch(t *testing.T) {
	for err, want := range map[error]bool{
		nats.ErrNoResponders:                          true,
		fmt.Errorf("fetch: %w", nats.ErrNoResponders): true,
		jetstream.ErrNoHeartbeat:                      true,
		nats.ErrTimeout:                               true,
		nil:                                           false,
		nats.ErrConnectionClosed:                      false,
		errors.New("nats: permissions violation"):     false,
	} {
		if got := transient(err); got != want {
			t.Errorf("transient(%v) = %v, want %v", err, got, want)
		}
	}
}
