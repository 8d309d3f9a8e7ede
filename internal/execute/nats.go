package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/result"
	"github.com/toolgate/toolgate/internal/tracehdr"
	"github.com/toolgate/toolgate/pkg/wire"
)

// NATS executes by request/reply on toolgate.exec.<tool> (or a subject the
// tool's definition names). The request body is the validated arguments; the
// headers carry the call id, the idempotency key and, when Signer is set,
// Toolgate-Signature (wire.SignExecUntil). A reply with header
// Toolgate-Signature-Refused is ErrNotRun wrapping ErrRefused; one with
// Toolgate-Exec-Record running (the executor took this request before and
// its run did not finish) is ErrUnknown, unavailable ErrNotRun.
type NATS struct {
	NC        *nats.Conn
	Subject   func(tool string) string // nil: wire.Exec
	Signer    *Signer                  // signs every request; nil: unsigned
	MaxResult int                      // bytes of an answer kept whole; 0: DefaultMaxResult (never over result.Limit of the max payload)
}

func (n *NATS) subject(tool string) string {
	if n.Subject != nil {
		return n.Subject(tool)
	}
	return wire.Exec(tool)
}

func (n *NATS) maxResult() int {
	limit := result.Limit(n.NC.MaxPayload())
	if n.MaxResult > 0 {
		return min(n.MaxResult, limit)
	}
	return min(DefaultMaxResult, limit)
}

// Execute implements Executor.
func (n *NATS) Execute(ctx context.Context, req Request) (Reply, error) {
	subj := n.subject(req.Tool)
	m := nats.NewMsg(subj)
	m.Data = req.Arguments
	m.Header.Set(wire.HeaderCallID, req.CallID)
	m.Header.Set(wire.HeaderIdemKey, req.IdempotencyKey)
	tracehdr.Inject(ctx, m.Header) // W3C traceparent, lowercase
	if err := n.sign(m, req, "", req.Arguments); err != nil {
		return Reply{}, err
	}
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
	if reason := resp.Header.Get(wire.HeaderSignatureRefused); reason != "" {
		return Reply{}, refused(subj, reason, result.CutText(string(resp.Data), excerptMax))
	}
	switch resp.Header.Get(wire.HeaderExecRecord) {
	case wire.RecordRunning: // taken before, not finished or cut short
		return Reply{}, fmt.Errorf("%w: %s: %s", ErrUnknown, subj, result.CutText(string(resp.Data), excerptMax))
	case wire.RecordUnavailable:
		return Reply{}, fmt.Errorf("%w: %s: %s", ErrNotRun, subj, result.CutText(string(resp.Data), excerptMax))
	}
	var r Reply
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return Reply{OK: false, Error: fmt.Sprintf("executor answered with something that is not {\"ok\":...}: %v", err)}, nil
	}
	// What a result message can store, as the HTTP executor reads it.
	limit := n.maxResult()
	r.Result = result.Cut(r.Result, limit, result.ExcerptMax)
	r.Error = result.CutText(r.Error, limit)
	return r, nil
}

// Status implements StatusQuerier: a request on the tool's subject with
// header Toolgate-Query: status, the call's headers and an empty body.
// pkg/toolserver answers it from the keys it remembers.
func (n *NATS) Status(ctx context.Context, req Request) (StatusReply, error) {
	subj := n.subject(req.Tool)
	m := nats.NewMsg(subj)
	m.Header.Set(HeaderQuery, QueryStatus)
	m.Header.Set(wire.HeaderCallID, req.CallID)
	m.Header.Set(wire.HeaderIdemKey, req.IdempotencyKey)
	if err := n.sign(m, req, QueryStatus, nil); err != nil {
		return StatusReply{}, fmt.Errorf("%w: %v", ErrNoStatus, err)
	}
	resp, err := n.NC.RequestMsgWithContext(ctx, m)
	if err != nil {
		return StatusReply{}, fmt.Errorf("%w: %s: %v", ErrNoStatus, subj, err)
	}
	if reason := resp.Header.Get(wire.HeaderSignatureRefused); reason != "" {
		return StatusReply{}, fmt.Errorf("%w: %w", ErrNoStatus, refused(subj, reason, result.CutText(string(resp.Data), excerptMax)))
	}
	return decodeStatus(resp.Data)
}

// sign sets m's replay partition (req.ReplayPartition, when > 0) and its
// signature, which covers the partition: the executor records the request,
// and answers a status query, in that partition's bucket.
func (n *NATS) sign(m *nats.Msg, req Request, query string, body []byte) error {
	if req.ReplayPartition > 0 {
		m.Header.Set(wire.HeaderReplayPartition, strconv.Itoa(req.ReplayPartition))
	}
	sig, err := n.Signer.header(req, query, body, req.ReplayPartition)
	if err != nil {
		return err
	}
	if sig != "" {
		m.Header.Set(wire.HeaderSignature, sig)
	}
	return nil
}

var _ StatusQuerier = (*NATS)(nil)
