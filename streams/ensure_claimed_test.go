package streams

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

// A deployment of before the claimed subjects (TOOLGATE_IN on toolgate.in.>,
// accumulate's durable on the same, input stored and one delivered not yet
// acknowledged) upgrades in place: TOOLGATE_IN is narrowed to its own
// subjects with its messages kept, TOOLGATE_RESPONSES is made beside it,
// and accumulate's durable keeps its place (nothing redelivered but what
// it had not acknowledged).
func TestEnsure_narrows_the_ingest_stream_of_before_in_place(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := DefaultSettings()
	s.Storage = jetstream.MemoryStorage
	old := s.StreamConfigs()[0]
	old.Subjects = []string{"toolgate.in.>"}
	in, err := js.CreateStream(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	oldCons := s.Config(Consumer{Name: Accumulate, Subject: "toolgate.in.>", Description: "toolgate accumulate gate"})
	c, err := in.CreateConsumer(ctx, oldCons)
	if err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{SubjectInResponse, "toolgate.in.t.acme.response", "toolgate.in.t.acme.stream.r1", "toolgate.in.as.gw.response"} {
		if _, err := js.Publish(ctx, subj, []byte("before")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Next(); err != nil { // delivered, not acknowledged
		t.Fatal(err)
	}
	if err := Ensure(ctx, js, s); err != nil {
		t.Fatalf("apply over the layout of before: %v", err)
	}
	info, err := in.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 4 || !slices.Equal(info.Config.Subjects, InSubjects()) {
		t.Fatalf("TOOLGATE_IN after the apply: %d messages, subjects %v", info.State.Msgs, info.Config.Subjects)
	}
	cons, err := js.Consumer(ctx, StreamIn, Accumulate)
	if err != nil {
		t.Fatal(err)
	}
	ci := cons.CachedInfo()
	if !slices.Equal(ci.Config.FilterSubjects, InSubjects()) || ci.Delivered.Stream != 1 || ci.NumAckPending != 1 {
		t.Fatalf("accumulate's durable after the apply: filters %v, delivered %d, pending %d", ci.Config.FilterSubjects, ci.Delivered.Stream, ci.NumAckPending)
	}
	if _, err := js.Consumer(ctx, StreamResponses, AccumulateClaimed); err != nil {
		t.Fatalf("accumulate's claimed durable: %v", err)
	}
	// The claimed subject holds one message; a second is refused.
	if _, err := js.Publish(ctx, "toolgate.in.t.acme.response.r9", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "toolgate.in.t.acme.response.r9", []byte("two")); err == nil {
		t.Fatal("a second message on a claimed subject was stored")
	}
	// A subject no stream takes any more is refused at publish.
	if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: "toolgate.in.junk", Data: []byte("x")}); err == nil {
		t.Fatal("toolgate.in.junk was stored")
	}
	if err := Ensure(ctx, js, s); err != nil { // applied again: nothing to change
		t.Fatal(err)
	}
}
