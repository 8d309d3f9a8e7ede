package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/result"
	"github.com/toolgate/toolgate/pkg/wire"
)

// NATS executes by request/reply on toolgate.exec.<tool> (or a subject the
// tool's definition names). The request body is the validated arguments; the
// headers carry the call id and the idempotency key.
type NATS struct {
	NC      *nats.Conn
	Subject func(tool string) string // nil: wire.Exec
}

// Execute implements Executor.
func (n *NATS) Execute(ctx context.Context, req Request) (Reply, error) {
	subj := wire.Exec(req.Tool)
	if n.Subject != nil {
		subj = n.Subject(req.Tool)
	}
	m := nats.NewMsg(subj)
	m.Data = req.Arguments
	m.Header.Set(wire.HeaderCallID, req.CallID)
	m.Header.Set(wire.HeaderIdemKey, req.IdempotencyKey)
	resp, err := n.NC.RequestMsgWithContext(ctx, m)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return Reply{}, fmt.Errorf("%w: no executor listens on %s", ErrNotRun, subj)
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrConnectionDraining):
		return Reply{}, fmt.Errorf("%w: %v", ErrNotRun, err)
	case err != nil:
		// Sent, and no answer in time: it may have run.
		return Reply{}, fmt.Errorf("%w: %s: %v", ErrUnknown, subj, err)
	}
	var r Reply
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return Reply{OK: false, Error: fmt.Sprintf("executor answered with something that is not {\"ok\":...}: %v", err)}, nil
	}
	// What a result message can store, as the HTTP executor reads it.
	limit := result.Limit(n.NC.MaxPayload())
	r.Result = result.Cut(r.Result, limit, result.ExcerptMax)
	r.Error = result.CutText(r.Error, limit)
	return r, nil
}

// Status implements StatusQuerier: a request on the tool's subject with
// header Toolgate-Query: status, the call's headers and an empty body.
// pkg/toolserver answers it from the keys it remembers.
func (n *NATS) Status(ctx context.Context, req Request) (StatusReply, error) {
	subj := wire.Exec(req.Tool)
	if n.Subject != nil {
		subj = n.Subject(req.Tool)
	}
	m := nats.NewMsg(subj)
	m.Header.Set(HeaderQuery, QueryStatus)
	m.Header.Set(wire.HeaderCallID, req.CallID)
	m.Header.Set(wire.HeaderIdemKey, req.IdempotencyKey)
	resp, err := n.NC.RequestMsgWithContext(ctx, m)
	if err != nil {
		return StatusReply{}, fmt.Errorf("%w: %s: %v", ErrNoStatus, subj, err)
	}
	return decodeStatus(resp.Data)
}

var _ StatusQuerier = (*NATS)(nil)
