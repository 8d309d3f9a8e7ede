package stage

import (
	"context"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
)

// refusedNow runs op, which the server must refuse as a permission
// violation (saw reports it), and returns as soon as the violation is
// reported. The server answers a denied publish or JetStream API request
// with an -ERR to the connection, never with a reply, so op alone would
// wait out its whole timeout (seconds per refusal, which made two tests of
// this package take 25 s each). op succeeding fails the test; op failing
// otherwise still needs the violation reported.
func refusedNow(t *testing.T, what string, saw func() error, op func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- op(ctx) }()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("%s was allowed", what)
			}
			testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, saw)
			return
		case <-tick.C:
			if saw() == nil {
				return
			}
		}
	}
}
