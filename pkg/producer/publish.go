package producer

import (
	"context"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/pkg/wire"
)

// PublishResponse publishes one complete provider response body on
// toolgate.in.response, with Nats-Msg-Id = the response id, so a retried
// publish is stored once.
func (p *Producer) PublishResponse(ctx context.Context, m Meta, body []byte) error {
	h, err := m.header()
	if err != nil {
		return err
	}
	h.Set(nats.MsgIdHdr, m.ResponseID)
	if _, err := p.js.PublishMsg(ctx, &nats.Msg{Subject: wire.SubjectInResponse, Data: body, Header: h}); err != nil {
		return fmt.Errorf("producer: publish response %s: %w", m.ResponseID, err)
	}
	return nil
}

// PublishStream publishes a provider stream's events, in order, on
// toolgate.in.stream.<response-id>: event i has Toolgate-Seq i+1 and
// Nats-Msg-Id <response-id>:<i+1>. A non-empty end adds, after them, the
// marker of a stream the producer could not finish (Toolgate-End: end, no
// body, Nats-Msg-Id <response-id>:end): toolgate then settles the response
// without waiting for its idle timeout. A stream is complete without it when
// its events hold the provider's terminal event.
func (p *Producer) PublishStream(ctx context.Context, m Meta, events [][]byte, end string) error {
	h, err := m.header()
	if err != nil {
		return err
	}
	subj := wire.InStream(m.ResponseID)
	for i, ev := range events {
		msg := &nats.Msg{Subject: subj, Data: ev, Header: clone(h)}
		msg.Header.Set(wire.HeaderSeq, strconv.Itoa(i+1))
		msg.Header.Set(nats.MsgIdHdr, fmt.Sprintf("%s:%d", m.ResponseID, i+1))
		if _, err := p.js.PublishMsg(ctx, msg); err != nil {
			return fmt.Errorf("producer: publish event %d of %s: %w", i+1, m.ResponseID, err)
		}
	}
	if end == "" {
		return nil
	}
	msg := &nats.Msg{Subject: subj, Header: clone(h)}
	msg.Header.Set(wire.HeaderEnd, end)
	msg.Header.Set(nats.MsgIdHdr, m.ResponseID+":end")
	if _, err := p.js.PublishMsg(ctx, msg); err != nil {
		return fmt.Errorf("producer: publish the end of %s: %w", m.ResponseID, err)
	}
	return nil
}

func clone(h nats.Header) nats.Header {
	c := make(nats.Header, len(h)+2)
	for k, v := range h {
		c[k] = append([]string(nil), v...)
	}
	return c
}
