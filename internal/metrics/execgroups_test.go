package metrics

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// A group's durable, read from a real server, tells its queue, its calls in
// flight and its circuit: paused is open, MaxAckPending 1 on a group
// configured for more is half-open, a group of one at 1 is closed.
func TestExecutorGroups_read_queue_in_flight_and_circuit_from_the_durables(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: streams.StreamExecute, Subjects: []string{streams.ExecuteGroups()}, Retention: jetstream.WorkQueuePolicy}); err != nil {
		t.Fatal(err)
	}
	var set streams.Settings
	erp := set.Config(streams.ExecuteGroupConsumer("erp", 4))
	for _, cfg := range []jetstream.ConsumerConfig{erp, set.Config(streams.ExecuteGroupConsumer("solo", 1)), set.Config(streams.ExecuteGroupConsumer("weather", 8))} {
		if _, err := js.CreateOrUpdateConsumer(ctx, streams.StreamExecute, cfg); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		if _, err := js.Publish(ctx, streams.ExecuteSubject("erp", streams.ExecuteLane), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.Publish(ctx, streams.ExecuteSubject("weather", streams.ExecuteLane), []byte("y")); err != nil {
		t.Fatal(err)
	}
	// One weather call delivered and not acknowledged: in flight.
	wc, err := js.Consumer(ctx, streams.StreamExecute, streams.ExecuteDurable("weather"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wc.Fetch(1, jetstream.FetchMaxWait(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	// The breaker opens erp: MaxAckPending 1, paused.
	open := erp
	open.MaxAckPending = 1
	if _, err := js.UpdateConsumer(ctx, streams.StreamExecute, open); err != nil {
		t.Fatal(err)
	}
	if _, err := js.PauseConsumer(ctx, streams.StreamExecute, erp.Durable, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	read := JetStreamExecutorGroups(js)
	// The server acknowledges a publish before it counts it pending for the
	// durables: read until erp's queue is in, then check all.
	var gs []ExecutorGroup
	testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
		var err error
		if gs, err = read(ctx); err != nil {
			return err
		}
		if len(gs) == 0 || gs[0].Queue < 3 {
			return fmt.Errorf("groups %+v: erp's queue not counted yet", gs)
		}
		return nil
	})
	if len(gs) != 3 || gs[0].Group != "erp" || gs[1].Group != "solo" || gs[2].Group != "weather" {
		t.Fatalf("groups: %+v", gs)
	}
	if g := gs[0]; g.Circuit != CircuitOpen || g.Queue != 3 || g.Concurrency != 4 || g.MaxAck != 1 || time.Until(g.PausedUntil) < 30*time.Second {
		t.Errorf("erp: %+v, want open, queue 3, concurrency 4, paused about a minute", g)
	}
	if g := gs[1]; g.Circuit != CircuitClosed || g.Concurrency != 1 {
		t.Errorf("solo: %+v, want closed (a group of one is not half-open)", g)
	}
	if g := gs[2]; g.Circuit != CircuitClosed || g.InFlight != 1 || g.Queue != 0 || g.Concurrency != 8 {
		t.Errorf("weather: %+v, want closed, 1 in flight", g)
	}

	m := New()
	defer m.WatchExecutorGroups(read)()
	out := scrape(t, m)
	for _, want := range []string{
		`toolgate_executor_circuit_state{group="erp"} 2`, `toolgate_executor_group_queue{group="erp"} 3`,
		`toolgate_executor_circuit_state{group="weather"} 0`, `toolgate_executor_group_in_flight{group="weather"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape has no %s", want)
		}
	}

	// The cool-down ends: not paused, MaxAckPending still 1: half-open.
	if _, err := js.ResumeConsumer(ctx, streams.StreamExecute, erp.Durable); err != nil {
		t.Fatal(err)
	}
	if out := scrape(t, m); !strings.Contains(out, `toolgate_executor_circuit_state{group="erp"} 1`) {
		t.Errorf("after the pause, erp is not half-open:\n%s", grep(out, "circuit_state"))
	}
}

func TestCircuitTransition_counts_valid_groups_and_states_only(t *testing.T) {
	m := New()
	m.CircuitTransition("erp", CircuitOpen)
	m.CircuitTransition("erp", CircuitOpen)
	m.CircuitTransition("bad group", CircuitOpen)
	m.CircuitTransition("erp", "sideways")
	out := scrape(t, m)
	if !strings.Contains(out, `toolgate_executor_circuit_transitions_total{group="erp",state="open"} 2`) {
		t.Errorf("no count of erp's two openings:\n%s", grep(out, "transitions"))
	}
	if strings.Contains(out, "bad group") || strings.Contains(out, "sideways") {
		t.Errorf("a hostile group or state became a label:\n%s", grep(out, "transitions"))
	}
}

// A fail-fast group's durable is never paused: its open circuit is the
// metadata key toolgate_open_until, open before that time and half-open
// (the probe may go) after it; without the key it is closed.
func TestCircuitOf_a_fail_fast_group_reads_its_open_until(t *testing.T) {
	ci := func(meta map[string]string) *jetstream.ConsumerInfo {
		return &jetstream.ConsumerInfo{Config: jetstream.ConsumerConfig{MaxAckPending: 8, Metadata: meta}}
	}
	at := func(d time.Duration) string { return time.Now().Add(d).UTC().Format(time.RFC3339Nano) }
	for want, meta := range map[string]map[string]string{
		CircuitOpen:     {streams.GroupConcurrencyKey: "8", streams.GroupOpenUntilKey: at(time.Minute)},
		CircuitHalfOpen: {streams.GroupConcurrencyKey: "8", streams.GroupOpenUntilKey: at(-time.Second)},
		CircuitClosed:   {streams.GroupConcurrencyKey: "8"},
	} {
		if got := CircuitOf(ci(meta)); got != want {
			t.Errorf("metadata %v: circuit %s, want %s", meta, got, want)
		}
	}
}
