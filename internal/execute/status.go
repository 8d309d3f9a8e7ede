package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/pkg/wire"
)

// HeaderQuery marks a request that asks about a call instead of running it
// (wire.HeaderQuery); QueryStatus is its only value.
const (
	HeaderQuery = wire.HeaderQuery
	QueryStatus = wire.QueryStatus
)

// StatusReply answers "did call X happen?" (wire.ExecStatusReply). Known
// false does not prove the call never ran (an executor may forget), so the
// gate still ends the call outcome_unknown.
type StatusReply = wire.ExecStatusReply

// StatusQuerier is implemented by executors that can say whether a call
// happened. The execute gate asks before it records outcome_unknown for a
// claim whose lease expired without an answer. An error means the executor
// could not answer (no responder, no status endpoint, an answer that is not a
// StatusReply).
type StatusQuerier interface {
	Status(ctx context.Context, req Request) (StatusReply, error)
}

// ErrNoStatus: the executor cannot answer status queries.
var ErrNoStatus = errors.New("execute: the executor cannot say whether a call happened")

// decodeStatus reads a StatusReply and insists on the "known" field, so an
// executor that ran the query as a call (and answered {"ok": ...}) is not
// taken for an answer.
func decodeStatus(data []byte) (StatusReply, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return StatusReply{}, fmt.Errorf("%w: answer is not JSON: %v", ErrNoStatus, err)
	}
	if _, ok := probe["known"]; !ok {
		return StatusReply{}, fmt.Errorf("%w: answer has no \"known\" field", ErrNoStatus)
	}
	var s StatusReply
	if err := json.Unmarshal(data, &s); err != nil {
		return StatusReply{}, fmt.Errorf("%w: %v", ErrNoStatus, err)
	}
	return s, nil
}

// notRunAfter is ErrNotRun with the delay the tool asked for.
type notRunAfter struct {
	after time.Duration
	msg   string
}

func (e *notRunAfter) Error() string { return e.msg }
func (e *notRunAfter) Unwrap() error { return ErrNotRun }

// RetryAfter returns the delay an ErrNotRun asked for (an HTTP Retry-After),
// or 0.
func RetryAfter(err error) time.Duration {
	var n *notRunAfter
	if errors.As(err, &n) {
		return n.after
	}
	return 0
}
