package producer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
)

// ErrDuplicate: JetStream already held this exact message (the same
// response id and content, within its duplicate window), so nothing new was
// stored: a retry of a publish that had arrived. The response's outcomes
// were published when it first arrived.
var ErrDuplicate = errors.New("producer: duplicate: this response was already published with this content; nothing new was sent")

// ErrConflict: toolgate refused the response because its id was used
// before with other content or by another identity (response_id_conflict),
// or because its stream's events came from more than one producer
// (stream_conflict). Nothing of it ran; send it again under a new id.
var ErrConflict = errors.New("producer: toolgate refused the response id: it was used before with other content or by another producer; nothing ran, send it under a new response id")

// ErrTooLarge: toolgate's ingest stream refused the message for its size
// (JetStream error 10054, or over the connection's max payload): a
// response body or a stream event larger than the body limit (8 MiB) with
// 64 KiB of headers could never become a call, so it is not stored and
// nothing of it runs. Send less: a smaller response, or a stream's events
// one by one.
var ErrTooLarge = errors.New("producer: too large for toolgate's ingest stream (a body or event over 8 MiB with 64 KiB of headers): nothing was stored, nothing of it runs")

// sizeRefused wraps err with ErrTooLarge when NATS refused the message for
// its size; other errors are returned as they are.
func sizeRefused(err error, m *nats.Msg) error {
	if errors.Is(err, jetstream.ErrStreamMessageExceedsMaximum) || errors.Is(err, nats.ErrMaxPayload) {
		return fmt.Errorf("%w: %d bytes of body, %d of headers: %w", ErrTooLarge, len(m.Data), headerBytes(m.Header), err)
	}
	return err
}

func headerBytes(h nats.Header) int {
	n := 0
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// Refused returns an error wrapping ErrConflict when r, a response-level
// result, says the response id or stream was refused, and nil otherwise.
func Refused(r *wire.ResponseResult) error {
	if r == nil || (r.Status != wire.ResponseIDConflict && r.Status != wire.StreamConflict) {
		return nil
	}
	return fmt.Errorf("%w: response %s: %s", ErrConflict, r.ResponseID, r.Text)
}

// PublishResponse publishes one complete provider response body, with
// Nats-Msg-Id <response-id>:<sha256 of the sender and the body>, so a
// retried publish is stored once and reported as ErrDuplicate. Where:
//   - a tenant's interactive response: its claimed subject,
//     toolgate.in.t.<tenant>.response.<response-id> (wire.InTenantClaimed),
//     which holds one message for the claim period (7 days): the publish
//     claims the id, and other content under a used id is refused here
//     with ErrConflict (nothing stored, nothing runs), the same content
//     after the duplicate window with ErrDuplicate (publishClaimed);
//   - a tenant's batch response (m.Priority batch): its batch subject
//     toolgate.in.t.<tenant>.batch (accumulate reads it apart from the
//     tenant's interactive responses);
//   - no tenant (see tenantOf): toolgate.in.response; an asserting
//     producer (AssertingAs): its own subject.
//
// On the last two, and the batch subject, other content under a used id is
// stored and refused by toolgate (response_id_conflict, which a Watch
// receives; see Refused). A deployment older than the claimed subjects
// refuses the publish (the producer user may not publish there): upgrade
// producers last (README, "Upgrading").
func (p *Producer) PublishResponse(ctx context.Context, m Meta, body []byte) error {
	tenant, err := p.tenantOf(m)
	if err != nil {
		return err
	}
	m.Tenant = tenant // in the header too, so the message id's digest tells tenants apart
	h, err := m.header()
	if err != nil {
		return err
	}
	h.Set(nats.MsgIdHdr, m.ResponseID+":"+digest(h, body))
	subj := wire.InResponseForPriority(tenant, m.Priority)
	claimed := tenant != "" && m.Priority != wire.PriorityBatch
	if claimed {
		subj = wire.InTenantClaimed(tenant, m.ResponseID)
	}
	if p.as != "" {
		subj, claimed = wire.InAsResponse(p.as), false
	}
	msg := &nats.Msg{Subject: subj, Data: body, Header: h}
	if claimed {
		return p.publishClaimed(ctx, msg, m.ResponseID)
	}
	ack, err := p.js.PublishMsg(ctx, msg)
	if err != nil {
		return fmt.Errorf("producer: publish response %s: %w", m.ResponseID, sizeRefused(err, msg))
	}
	if duplicate(ack) {
		return fmt.Errorf("%w (response id %s)", ErrDuplicate, m.ResponseID)
	}
	return nil
}

// PublishStream publishes a provider stream's events, in order, on
// toolgate.in.t.<tenant>.stream.<response-id> (toolgate.in.stream.<response-id>
// for no tenant; see tenantOf): event i has Toolgate-Seq i+1 and
// Nats-Msg-Id <response-id>:<i+1>:<sha256 of the sender and the event>, so a
// retried event
// is stored once while a different one for the same seq is stored and
// ends the stream stream_conflict. A non-empty end adds, after them, the
// marker of a stream the producer could not finish (Toolgate-End: end, no
// body, Nats-Msg-Id <response-id>:end:<sha256 of the sender>): toolgate then settles the response
// without waiting for its idle timeout. A stream is complete without it when
// its events hold the provider's terminal event. When JetStream already held
// every message it returns ErrDuplicate: nothing new was sent.
func (p *Producer) PublishStream(ctx context.Context, m Meta, events [][]byte, end string) error {
	tenant, err := p.tenantOf(m)
	if err != nil {
		return err
	}
	m.Tenant = tenant // in the header too, so the message id's digest tells tenants apart
	h, err := m.header()
	if err != nil {
		return err
	}
	subj := wire.InStreamFor(tenant, m.ResponseID)
	sent, dups := 0, 0
	for i, ev := range events {
		msg := &nats.Msg{Subject: subj, Data: ev, Header: clone(h)}
		msg.Header.Set(wire.HeaderSeq, strconv.Itoa(i+1))
		msg.Header.Set(nats.MsgIdHdr, fmt.Sprintf("%s:%d:%s", m.ResponseID, i+1, digest(h, ev)))
		ack, err := p.js.PublishMsg(ctx, msg)
		if err != nil {
			return fmt.Errorf("producer: publish event %d of %s: %w", i+1, m.ResponseID, sizeRefused(err, msg))
		}
		sent++
		if duplicate(ack) {
			dups++
		}
	}
	if end != "" {
		msg := &nats.Msg{Subject: subj, Header: clone(h)}
		msg.Header.Set(wire.HeaderEnd, end)
		msg.Header.Set(nats.MsgIdHdr, m.ResponseID+":end:"+digest(h, nil))
		ack, err := p.js.PublishMsg(ctx, msg)
		if err != nil {
			return fmt.Errorf("producer: publish the end of %s: %w", m.ResponseID, err)
		}
		sent++
		if duplicate(ack) {
			dups++
		}
	}
	if sent > 0 && dups == sent {
		return fmt.Errorf("%w (response id %s, %d stream messages)", ErrDuplicate, m.ResponseID, sent)
	}
	return nil
}

// tenantOf is the tenant whose own subjects m is published on: m.Tenant,
// else the Producer's (ForTenant); "" publishes on the shared subjects.
// Only a tenant's producer user may publish on its subjects, and toolgate
// takes the tenant from them where no issuer verifies it; on the shared
// subjects it grants a Toolgate-Tenant header nothing without a token.
func (p *Producer) tenantOf(m Meta) (string, error) {
	switch {
	case m.Tenant == "":
		return p.tenant, nil
	case p.tenant != "" && p.tenant != m.Tenant:
		return "", fmt.Errorf("producer: Meta.Tenant %q is not the producer's tenant %q (ForTenant): a producer user publishes for its own tenant only", m.Tenant, p.tenant)
	}
	return m.Tenant, nil
}

func duplicate(ack *jetstream.PubAck) bool { return ack != nil && ack.Duplicate }

// digest is 32 hex digits of the sha256 of data and of who sends it (the
// identity headers of h: tenant, principal, token): a message id part that
// only the same content from the same sender repeats. JetStream's duplicate
// window spans the whole ingest stream, so a message id of the response id
// and content alone would let another tenant who publishes the same content
// under the same id first have this one dropped as its duplicate.
func digest(h nats.Header, data []byte) string {
	s := sha256.New()
	for _, k := range []string{wire.HeaderTenant, wire.HeaderPrincipal, wire.HeaderToken} {
		v := h.Get(k)
		fmt.Fprintf(s, "%d:%s", len(v), v)
	}
	fmt.Fprintf(s, "%d:", len(data))
	s.Write(data)
	return hex.EncodeToString(s.Sum(nil)[:16])
}

func clone(h nats.Header) nats.Header {
	c := make(nats.Header, len(h)+2)
	for k, v := range h {
		c[k] = append([]string(nil), v...)
	}
	return c
}
