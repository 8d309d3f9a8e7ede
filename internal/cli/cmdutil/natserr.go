package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// errNoSuch marks an explained "not found": the thing asked for is not
// there (a key, a message), while the server and its streams are.
var errNoSuch = errors.New("not found")

// ExplainNATS turns a raw NATS error met while reading what (e.g. "call
// r1-0", "dead letter 12") into what happened and what to do; the original
// error stays in the chain for errors.Is. nil stays nil.
func ExplainNATS(err error, what string) error {
	if err == nil {
		return nil
	}
	msg := strings.ToLower(err.Error())
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrMsgNotFound), errors.Is(err, nats.ErrKeyNotFound), errors.Is(err, nats.ErrMsgNotFound):
		return fmt.Errorf("no %s (%w: %w)", what, errNoSuch, err)
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount),
		errors.Is(err, nats.ErrJetStreamNotEnabled), errors.Is(err, nats.ErrJetStreamNotEnabledForAccount), errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("%s: this NATS server has no JetStream (%w): toolgate needs `toolgate up`, or a nats-server started with -js and `toolgate streams apply`", what, err)
	case errors.Is(err, jetstream.ErrBucketNotFound), errors.Is(err, jetstream.ErrStreamNotFound), errors.Is(err, nats.ErrBucketNotFound),
		errors.Is(err, nats.ErrStreamNotFound), strings.Contains(msg, "bucket not found"), strings.Contains(msg, "stream not found"):
		return fmt.Errorf("%s: this NATS server has no toolgate streams (%w): is `toolgate up` running there (check --nats / TOOLGATE_NATS_URL), or run `toolgate streams apply`", what, err)
	case errors.Is(err, nats.ErrPermissionViolation), strings.Contains(msg, "permissions violation"), errors.Is(err, nats.ErrAuthorization):
		return fmt.Errorf("%s: not permitted (%w): operator commands connect as the admin user; set TOOLGATE_SECRETS to the secrets directory of `toolgate up` (nats-admin.password there), or TOOLGATE_NATS_USER and TOOLGATE_NATS_PASSWORD", what, err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return fmt.Errorf("%s: NATS did not answer in time (%w): is the server overloaded, or does this user lack permission to read it (connect as the admin user)?", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
