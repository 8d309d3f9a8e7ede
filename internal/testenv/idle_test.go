package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A message just published is never idle for a consumer that has not been
// delivered it, however soon after the publish the question comes. The
// server acknowledges a publish before it counts it pending for the
// consumers, through a queue that signals them one by one, so the counts
// alone said "idle" in that moment: a worker test failed in CI so. Here the
// queue is kept busy on purpose: 100 other consumers and a burst of 200
// messages ahead of the one that matters (the counts alone said "idle" in
// about half of these rounds).
func TestConsumerIdle_a_message_just_published_is_not_idle(t *testing.T) {
	s := RunJetStream(t)
	_, js := Connect(t, s)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>", "u.>"}}); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if _, err := js.CreateConsumer(ctx, "T", jetstream.ConsumerConfig{Durable: fmt.Sprintf("noise%d", i), AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: "t.>"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		name := fmt.Sprintf("c%d", i)
		cfg := jetstream.ConsumerConfig{Durable: name, AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: fmt.Sprintf("u.%d", i)}
		if i%2 == 1 {
			cfg.FilterSubject, cfg.FilterSubjects = "", []string{fmt.Sprintf("u.%d", i), "u.none"}
		}
		if _, err := js.CreateConsumer(ctx, "T", cfg); err != nil {
			t.Fatal(err)
		}
		if err := ConsumerIdle(ctx, js, "T", name); err != nil {
			t.Fatalf("%s, nothing on its filter: %v", name, err)
		}
		for range 200 {
			if _, err := js.PublishAsync("t.x", []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		<-js.PublishAsyncComplete()
		if _, err := js.Publish(ctx, fmt.Sprintf("u.%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := ConsumerIdle(ctx, js, "T", name); err == nil {
			t.Fatalf("round %d: %s idle with a message it was never delivered", i, name)
		}
	}
}

// Once every message on the filter is delivered and acknowledged, the
// consumer is idle, whatever is stored outside its filter.
func TestConsumerIdle_everything_acknowledged_is_idle(t *testing.T) {
	s := RunJetStream(t)
	_, js := Connect(t, s)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>", "u.>"}}); err != nil {
		t.Fatal(err)
	}
	c, err := js.CreateConsumer(ctx, "T", jetstream.ConsumerConfig{Durable: "one", AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: "t.>"})
	if err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{"t.a", "t.b", "u.a"} {
		if _, err := js.Publish(ctx, subj, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	b, err := c.Fetch(2, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for m := range b.Messages() {
		if err := ConsumerIdle(ctx, js, "T", "one"); err == nil {
			t.Fatal("idle while a delivered message is unacknowledged")
		}
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("fetched %d, want 2", n)
	}
	Eventually(t, 5*time.Second, 10*time.Millisecond, func() error { return ConsumerIdle(ctx, js, "T", "one") })
}
