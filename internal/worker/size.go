package worker

import (
	"errors"
	"fmt"
	"math"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// MaxHeaderBytes is the most header bytes JetStream stores with one message;
// the server refuses more ("header size exceeds maximum allowed of 64k").
const MaxHeaderBytes = math.MaxUint16

// ErrTooLarge is wrapped by Fits and by publish errors that no retry can
// fix: the message is over the connection's max payload or its headers over
// MaxHeaderBytes.
var ErrTooLarge = errors.New("worker: output too large for NATS to store")

// HeaderBytes is the size of h as NATS encodes it on the wire, with msgID
// added as its Nats-Msg-Id (what the server compares with its limits).
func HeaderBytes(h nats.Header, msgID string) int {
	if len(h) == 0 && msgID == "" {
		return 0
	}
	n := len("NATS/1.0\r\n") + len("\r\n")
	for k, vs := range h {
		if k == nats.MsgIdHdr && msgID != "" {
			continue
		}
		for _, v := range vs {
			n += len(k) + len(": ") + len(v) + len("\r\n")
		}
	}
	if msgID != "" {
		n += len(nats.MsgIdHdr) + len(": ") + len(msgID) + len("\r\n")
	}
	return n
}

// Fits returns nil when o can be stored on a connection whose max payload is
// maxPayload, and otherwise an error wrapping ErrTooLarge that says which
// limit it is over.
func Fits(o Output, maxPayload int64) error {
	hdr := HeaderBytes(o.Header, o.MsgID)
	if hdr > MaxHeaderBytes {
		return fmt.Errorf("%w: %s: headers are %d bytes, over the %d-byte limit", ErrTooLarge, o.Subject, hdr, MaxHeaderBytes)
	}
	if total := int64(hdr + len(o.Data)); maxPayload > 0 && total > maxPayload {
		return fmt.Errorf("%w: %s: %d bytes with headers, over the connection's max payload of %d bytes", ErrTooLarge, o.Subject, total, maxPayload)
	}
	return nil
}

// tooLarge reports whether a publish error can never succeed on retry: the
// client's max-payload check, or the stream refusing the size of the
// message or of its headers.
func tooLarge(err error) bool {
	if errors.Is(err, nats.ErrMaxPayload) || errors.Is(err, ErrTooLarge) {
		return true
	}
	var api *jetstream.APIError
	if errors.As(err, &api) {
		return api.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum || api.ErrorCode == jsErrCodeHeaderExceedsMaximum
	}
	return false
}

// jsErrCodeHeaderExceedsMaximum is the server's JSStreamHeaderExceedsMaximumErr,
// which nats.go does not name.
const jsErrCodeHeaderExceedsMaximum jetstream.ErrorCode = 10097
