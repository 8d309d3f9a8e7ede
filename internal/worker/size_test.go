package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

func TestFits_measures_headers_and_payload_as_nats_does(t *testing.T) {
	big := nats.Header{}
	big.Set("Toolgate-Tool", strings.Repeat("t", 70<<10))
	for _, test := range []struct {
		name string
		o    Output
		max  int64
		want string // "" fits; else a part of the error
	}{
		{"small", Output{Subject: "s", MsgID: "id", Data: []byte("x")}, 1 << 20, ""},
		{"no header at all", Output{Subject: "s", Data: make([]byte, 100)}, 100, ""},
		{"payload over max with headers", Output{Subject: "s", MsgID: "id", Data: make([]byte, 100)}, 100, "max payload of 100"},
		{"header over 64k", Output{Subject: "s", Header: big, Data: []byte("x")}, 16 << 20, "over the 65535-byte limit"},
	} {
		t.Run(test.name, func(t *testing.T) {
			err := Fits(test.o, test.max)
			switch {
			case test.want == "" && err != nil:
				t.Fatalf("want it to fit: %v", err)
			case test.want != "" && (err == nil || !strings.Contains(err.Error(), test.want) || !errors.Is(err, ErrTooLarge)):
				t.Fatalf("got %v, want ErrTooLarge saying %q", err, test.want)
			}
		})
	}
	// The measure is the one the server applies: one byte under the limit
	// is stored, one over is refused.
	h := nats.Header{}
	h.Set("A", "b")
	if got, want := HeaderBytes(h, "m"), len("NATS/1.0\r\nA: b\r\nNats-Msg-Id: m\r\n\r\n"); got != want {
		t.Fatalf("HeaderBytes = %d, want %d", got, want)
	}
}

// sizeRig is newRig with a core subscriber on out.> counting deliveries.
func sizeRig(t *testing.T, maxDeliver int) (rig, *atomic.Int32) {
	r := newRig(t, 2*time.Second, maxDeliver)
	var seen atomic.Int32
	sub, err := r.js.Conn().Subscribe("out.>", func(*nats.Msg) { seen.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	return r, &seen
}

func TestWorker_output_over_the_header_limit_is_dead_lettered_once_and_nothing_is_published(t *testing.T) {
	r, seen := sizeRig(t, 3)
	r.publish(t, "in.x", "1")
	var calls atomic.Int32
	start(t, r, Config{Backoff: func(uint64) time.Duration { return 10 * time.Millisecond }}, func(_ context.Context, m Msg) ([]Output, error) {
		calls.Add(1)
		h := nats.Header{}
		h.Set("Toolgate-Tool", strings.Repeat("t", 70<<10))
		return []Output{
			{Subject: "out.small", MsgID: "small", Data: m.Data},
			{Subject: "out.big", MsgID: "big", Header: h, Data: m.Data},
		}, nil
	})
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := r.count(t, "OUT", "dlq.output_too_large"); n != 1 {
			return fmt.Errorf("%d dead letters output_too_large, want 1", n)
		}
		return r.consumerIdle("stage")()
	})
	if n := r.count(t, "OUT", "out.>"); n != 0 {
		t.Fatalf("%d outputs stored, want 0: a message whose outputs do not all fit publishes none", n)
	}
	if n := seen.Load(); n != 0 {
		t.Fatalf("core subscriber got %d messages, want 0", n)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("handler ran %d times, want 1: output_too_large is permanent", n)
	}
}

func TestWorker_output_the_stream_refuses_for_its_size_is_dead_lettered_not_retried(t *testing.T) {
	// The connection allows 16 MiB, but the stream holding out.> stores at
	// most 1 KiB: the check before publishing passes, the server refuses.
	s := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, s)
	ctx := context.Background()
	for _, cfg := range []jetstream.StreamConfig{
		{Name: "IN", Subjects: []string{"in.>"}},
		{Name: "OUT", Subjects: []string{"out.>"}, MaxMsgSize: 1 << 10},
		{Name: "DLQ", Subjects: []string{"dlq.>"}},
	} {
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.CreateConsumer(ctx, "IN", jetstream.ConsumerConfig{Durable: "stage", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 2 * time.Second, MaxDeliver: 3}); err != nil {
		t.Fatal(err)
	}
	r := rig{js: js, ctx: ctx}
	r.publish(t, "in.x", "1")
	var calls atomic.Int32
	start(t, r, Config{Backoff: func(uint64) time.Duration { return 10 * time.Millisecond }}, func(context.Context, Msg) ([]Output, error) {
		calls.Add(1)
		return []Output{{Subject: "out.big", MsgID: "big", Data: make([]byte, 4<<10)}}, nil
	})
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := r.count(t, "DLQ", "dlq.output_too_large"); n != 1 {
			return fmt.Errorf("%d dead letters output_too_large, want 1", n)
		}
		return r.consumerIdle("stage")()
	})
	if n := calls.Load(); n != 1 {
		t.Fatalf("handler ran %d times, want 1", n)
	}
}

func TestWorker_dead_letter_that_cannot_fit_is_not_terminated(t *testing.T) {
	r, _ := sizeRig(t, -1)
	r.publish(t, "in.x", "1")
	var calls atomic.Int32
	huge := func(Msg, string, error) []Output {
		return []Output{{Subject: "dlq.x", Data: make([]byte, 17<<20)}}
	}
	start(t, r, Config{DeadLetter: huge, Backoff: func(uint64) time.Duration { return 10 * time.Millisecond }}, func(context.Context, Msg) ([]Output, error) {
		calls.Add(1)
		return nil, Permanent("bad", errors.New("bad"))
	})
	// Nak'ed, never terminated: it comes back.
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := calls.Load(); n < 3 {
			return fmt.Errorf("handled %d times: want the input kept and redelivered", n)
		}
		return nil
	})
	if n := r.count(t, "OUT", "dlq.>"); n != 0 {
		t.Fatalf("%d dead letters stored, want 0", n)
	}
}
