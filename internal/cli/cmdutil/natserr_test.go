package cmdutil

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestExplainNATS_says_what_to_do_and_keeps_the_cause(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"key", fmt.Errorf("get: %w", jetstream.ErrKeyNotFound), "no call r1-0 ("},
		{"old key", nats.ErrKeyNotFound, "no call r1-0 ("},
		{"message", jetstream.ErrMsgNotFound, "no call r1-0 ("},
		{"bucket", jetstream.ErrBucketNotFound, "this NATS server has no toolgate streams"},
		{"stream", jetstream.ErrStreamNotFound, "run `toolgate streams apply`"},
		{"stream text", errors.New("nats: API error: code=404 err_code=10059 description=stream not found"), "no toolgate streams"},
		{"no jetstream", jetstream.ErrJetStreamNotEnabled, "has no JetStream"},
		{"no responders", nats.ErrNoResponders, "has no JetStream"},
		{"permission", fmt.Errorf("x: %w", nats.ErrPermissionViolation), "connect as the admin user"},
		{"timeout", nats.ErrTimeout, "did not answer in time"},
		{"other", errors.New("boom"), "call r1-0: boom"},
	} {
		got := ExplainNATS(c.err, "call r1-0")
		if got == nil || !strings.Contains(got.Error(), c.want) {
			t.Errorf("%s: %v, want %q in it", c.name, got, c.want)
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%s: the cause is lost: %v", c.name, got)
		}
	}
	if ExplainNATS(nil, "x") != nil {
		t.Error("nil became an error")
	}
	if !errors.Is(ExplainNATS(jetstream.ErrKeyNotFound, "x"), errNoSuch) {
		t.Error("a missing key is not errNoSuch")
	}
}
