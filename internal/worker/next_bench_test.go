package worker

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

// What the nudge costs per input: the iterator's Next with and without its
// bound (a timer per call), on a consumer holding b.N messages.
//
//	go test -run '^$' -bench Next -count 4 ./internal/worker/
func BenchmarkNext(b *testing.B) {
	for _, c := range []struct {
		name string
		next func(jetstream.MessagesContext) (jetstream.Msg, error)
	}{
		{"unbounded", func(it jetstream.MessagesContext) (jetstream.Msg, error) { return it.Next() }},
		{"nudged", next},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := testenv.RunJetStream(b)
			_, js := testenv.Connect(b, s)
			ctx := context.Background()
			if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in.>"}}); err != nil {
				b.Fatal(err)
			}
			cons, err := js.CreateConsumer(ctx, "IN", jetstream.ConsumerConfig{Durable: "stage", AckPolicy: jetstream.AckNonePolicy})
			if err != nil {
				b.Fatal(err)
			}
			for range b.N {
				if _, err := js.PublishAsync("in.x", []byte("x")); err != nil {
					b.Fatal(err)
				}
			}
			<-js.PublishAsyncComplete()
			it, err := cons.Messages(pullOptions(100)...)
			if err != nil {
				b.Fatal(err)
			}
			defer it.Stop()
			b.ResetTimer()
			for range b.N {
				if _, err := c.next(it); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
