package ingest

import (
	"strings"

	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// Key is the response an input of accumulate belongs to: the id a stream
// event's subject names, or a whole response's id. The worker handles the
// inputs of one response one at a time and in order, and those of different
// responses concurrently (worker.Config.Key), so the response-id claim's
// round trip to the server no longer holds up every other response.
func Key(m worker.Msg) string {
	if rid, ok := strings.CutPrefix(m.Subject, streams.InStreamPrefix); ok {
		return "s:" + rid
	}
	return "r:" + responseID(m)
}
