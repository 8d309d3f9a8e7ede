package streams

import (
	"context"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
)

// On one server (not clustered: stream info without a cluster) there is no
// leader to place: SpreadLeaders does nothing and is no error, so `streams
// apply` may call it on every deployment.
func TestSpreadLeaders_on_a_single_server_is_a_no_op(t *testing.T) {
	_, js := testenv.Connect(t, testenv.RunJetStream(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := DefaultSettings()
	s.Fair.Partitions = 2
	if err := Ensure(ctx, js, s); err != nil {
		t.Fatal(err)
	}
	moves, err := SpreadLeaders(ctx, js)
	if err != nil || len(moves) != 0 {
		t.Fatalf("SpreadLeaders = %v, %v; want nothing", moves, err)
	}
}
