package producer

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// TestPublish_more_than_the_body_limit_is_refused_at_publish: TOOLGATE_IN,
// as streams declares it, on a server with toolgate up's 16 MiB max
// payload. A response or stream event larger than the body limit plus the
// header room could never become a call; it is refused when published, with
// ErrTooLarge, and not stored (stored, each one delivered to accumulate
// left a buffer of its size in nats-server's jsPubMsgPool for as long as
// load went on). A body just over the body limit is still stored, for
// accumulate to record as too_large with its dead letter.
func TestPublish_more_than_the_body_limit_is_refused_at_publish(t *testing.T) {
	_, js := testenv.Connect(t, testenv.RunJetStream(t, func(o *server.Options) { o.MaxPayload = 16 << 20 }))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var in jetstream.StreamConfig
	for _, c := range streams.DefaultSettings().StreamConfigs() {
		if c.Name == streams.StreamIn {
			in = c
		}
	}
	in.Storage = jetstream.MemoryStorage
	st, err := js.CreateStream(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	p := New(js)
	huge := bytes.Repeat([]byte("a"), streams.InMaxBody+streams.InHeaderRoom+1)
	if err := p.PublishResponse(ctx, Meta{Provider: "openai-chat", ResponseID: "r-huge"}, huge); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("response of %d bytes: %v, want ErrTooLarge", len(huge), err)
	}
	if err := p.PublishStream(ctx, Meta{Provider: "openai-chat", ResponseID: "s-huge"}, [][]byte{huge}, ""); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("stream event of %d bytes: %v, want ErrTooLarge", len(huge), err)
	}
	if n := len(stored(t, st)); n != 0 {
		t.Fatalf("%d messages stored, want none", n)
	}
	over := huge[:streams.InMaxBody+1]
	if err := p.PublishResponse(ctx, Meta{Provider: "openai-chat", ResponseID: "r-over"}, over); err != nil {
		t.Fatalf("response of %d bytes (accumulate's to refuse): %v", len(over), err)
	}
	if n := len(stored(t, st)); n != 1 {
		t.Fatalf("%d messages stored, want the one over the body limit", n)
	}
}
