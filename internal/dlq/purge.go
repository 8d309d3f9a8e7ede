package dlq

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/streams"
)

// Purge deletes letters from the stream and returns how many it deleted.
// A letter already gone (aged out, purged by someone else) is not an error.
func Purge(ctx context.Context, js jetstream.JetStream, letters []Letter) (int, error) {
	st, err := js.Stream(ctx, streams.StreamDLQ)
	if err != nil {
		return 0, fmt.Errorf("dlq: stream %s: %w", streams.StreamDLQ, err)
	}
	n := 0
	for _, l := range letters {
		err := st.DeleteMsg(ctx, l.Seq)
		switch {
		case err == nil:
			n++
		case errors.Is(err, jetstream.ErrMsgNotFound), isNoMessage(err):
		default:
			return n, fmt.Errorf("dlq: delete seq %d: %w", l.Seq, err)
		}
	}
	return n, nil
}

// isNoMessage reports the server's "no message found" (10057), which
// DeleteMsg returns for a sequence that is already gone; nats.go keeps only
// its text (ErrMsgDeleteUnsuccessful wraps the API error as a string).
func isNoMessage(err error) bool {
	return errors.Is(err, jetstream.ErrMsgDeleteUnsuccessful) && strings.Contains(err.Error(), "err_code=10057")
}
