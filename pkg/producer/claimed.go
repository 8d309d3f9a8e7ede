package producer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
)

// The claimed path (issue 30): a tenant's whole interactive response goes
// on toolgate.in.t.<tenant>.response.<response-id> (wire.InTenantClaimed),
// whose stream keeps one message per subject for the claim period and
// refuses another. The publish is the response-id claim: other content
// under a used id is refused here, at publish, and nothing of it is stored.

// claimedRefused reports whether err is the server refusing a message on a
// claimed subject that already holds one.
func claimedRefused(err error) bool {
	var ae *jetstream.APIError
	return errors.As(err, &ae) && ae.ErrorCode == wire.ClaimedFullCode && ae.Description == wire.ClaimedFullDescription
}

// publishClaimed publishes msg, a whole response with response id rid on
// its claimed subject: stored → nil; the same message id within the
// duplicate window → ErrDuplicate; the subject taken → the stored message
// is read back by direct get and its Nats-Msg-Id compared with msg's:
// the same (the same content from the same sender: a retry after the
// window, or accumulate's claim of the same response sent on another
// subject) → ErrDuplicate, else ErrConflict. Either way nothing was stored.
func (p *Producer) publishClaimed(ctx context.Context, msg *nats.Msg, rid string) error {
	ack, err := p.js.PublishMsg(ctx, msg)
	switch {
	case err == nil && duplicate(ack):
		return fmt.Errorf("%w (response id %s)", ErrDuplicate, rid)
	case err == nil:
		return nil
	case !claimedRefused(err):
		return fmt.Errorf("producer: publish response %s: %w", rid, sizeRefused(err, msg))
	}
	held, err := p.lastOn(ctx, msg.Subject)
	if err != nil {
		return fmt.Errorf("producer: response id %s is taken; reading what holds it: %w", rid, err)
	}
	if held != nil && held.Get(nats.MsgIdHdr) == msg.Header.Get(nats.MsgIdHdr) {
		return fmt.Errorf("%w (response id %s, stored at %s)", ErrDuplicate, rid, held.Get("Nats-Time-Stamp"))
	}
	return fmt.Errorf("%w: response %s: response_id_conflict: the id was used before with other content or by another identity; nothing of this one was stored", ErrConflict, rid)
}

// lastOn is the headers of the message stored on subject, a claimed
// subject of the producer's tenant (its grant: direct get on its own
// subjects only); nil when none is (it expired between). The producer
// does not know P: with P > 1 the server stored the subject with ".<k>"
// in TOOLGATE_RESPONSES_<k> (wire.ClaimedPlaces), so it asks the
// unsuffixed subject, then each partition in turn, a partition stream that
// does not exist answering at once (no responders). Only on this path, a
// response id refused at publish.
func (p *Producer) lastOn(ctx context.Context, subject string) (nats.Header, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
	}
	for _, at := range wire.ClaimedPlaces(subject) {
		r, err := p.nc.RequestWithContext(ctx, at, nil)
		if errors.Is(err, nats.ErrNoResponders) {
			continue
		}
		if err != nil {
			return nil, err
		}
		switch r.Header.Get("Status") {
		case "":
			return r.Header, nil
		case "404":
			continue
		}
		return nil, fmt.Errorf("direct get %s: status %s %s", subject, r.Header.Get("Status"), r.Header.Get("Description"))
	}
	return nil, nil
}
