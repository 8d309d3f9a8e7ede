package ingest

import (
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/pkg/wire"
)

// Key is the response an input of accumulate belongs to: the id a stream
// event's subject names, or a whole response's id. The worker handles the
// inputs of one response one at a time and in order, and those of different
// responses concurrently (worker.Config.Key), so the response-id claim's
// round trip to the server no longer holds up every other response.
func Key(m worker.Msg) string {
	if ref, ok := streamOf(m.Subject); ok {
		return "s:" + ref.key()
	}
	if tok, _, ok := wire.SplitInTenant(m.Subject); ok {
		if rid, ok := claimedRID(m.Subject); ok { // the subject's id (claimed.go)
			return "r:" + tok + "=" + rid
		}
		return "r:" + tok + "=" + responseID(m)
	}
	return "r:" + responseID(m)
}
