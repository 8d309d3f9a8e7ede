package streams

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestStages_consumer_configs_are_pinned: every durable as it stood before
// the table (name, filter, description, limits), so that a row edit cannot
// rename a durable or change its filter unnoticed.
func TestStages_consumer_configs_are_pinned(t *testing.T) {
	s := DefaultSettings()
	want := func(durable, filter, desc string, maxDeliver int) jetstream.ConsumerConfig {
		return jetstream.ConsumerConfig{
			Durable: durable, Description: desc, FilterSubject: filter, AckPolicy: jetstream.AckExplicitPolicy,
			AckWait: 30 * time.Second, MaxDeliver: maxDeliver, MaxAckPending: 2000, DeliverPolicy: jetstream.DeliverAllPolicy,
		}
	}
	for stage, filter := range map[string]string{
		Accumulate: "toolgate.in.>", Parse: "toolgate.gate.parse", Validate: "toolgate.gate.validate",
		Business: "toolgate.gate.business", Policy: "toolgate.gate.policy", Repair: "toolgate.gate.repair",
		Execute: "toolgate.gate.execute",
	} {
		w := want(stage, filter, "toolgate "+stage+" gate", 10)
		if Laned(stage) { // and the lanes of before their stream (fair.go)
			w.FilterSubject, w.FilterSubjects = "", []string{filter, filter + ".*"}
		}
		if stage == Accumulate { // TOOLGATE_IN's subjects, narrowed from toolgate.in.> when the claimed subjects got their stream
			w.FilterSubject, w.FilterSubjects = "", []string{"toolgate.in.response", "toolgate.in.stream.*", "toolgate.in.as.*.response", "toolgate.in.t.*.*", "toolgate.in.t.*.stream.*"}
		}
		if got := s.ConsumerConfig(stage); !reflect.DeepEqual(got, w) {
			t.Errorf("ConsumerConfig(%s) =\n%+v\nwant\n%+v", stage, got, w)
		}
	}
	timer := want("accumulate_timer", "toolgate.gate.accumulate_timer", "toolgate accumulate gate: idle timers of open streams", -1)
	if got := s.TimerConsumerConfig(); !reflect.DeepEqual(got, timer) {
		t.Errorf("TimerConsumerConfig =\n%+v\nwant\n%+v", got, timer)
	}
	if got := Names(); !slices.Equal(got, []string{Accumulate, Parse, Validate, Business, Policy, Repair, Execute}) {
		t.Errorf("Names = %v", got)
	}
	if StreamOf(Accumulate) != StreamIn || StreamOf(Execute) != StreamGates || StreamOf(AccumulateTimer) != StreamGates {
		t.Error("StreamOf changed")
	}
}

// TestStages_rows_are_sound: durables and filters are unique, every status
// is routed to at most one stage, and a BackOff is one the server accepts
// (nats-server rejects len(BackOff) > MaxDeliver unless MaxDeliver is -1).
func TestStages_rows_are_sound(t *testing.T) {
	s := DefaultSettings()
	durables, filters, inputs := map[string]bool{}, map[string]bool{}, map[string]string{}
	for _, st := range Table() {
		if st.Consumer.Name != st.Name || st.Consumer.Stream != st.Stream {
			t.Errorf("%s: the main consumer must be the stage's durable on its stream", st.Name)
		}
		for _, in := range st.Inputs {
			if prev, ok := inputs[string(in)]; ok {
				t.Errorf("status %s routed to %s and %s", in, prev, st.Name)
			}
			inputs[string(in)] = st.Name
		}
		for _, c := range st.Consumers() {
			if durables[c.Name] || filters[c.Subject] {
				t.Errorf("%s: durable or filter %s used twice", c.Name, c.Subject)
			}
			durables[c.Name], filters[c.Subject] = true, true
			cfg := s.Config(c)
			if n := len(cfg.BackOff); n > 0 && cfg.MaxDeliver != -1 && n > cfg.MaxDeliver {
				t.Errorf("%s: %d BackOff steps but MaxDeliver %d", c.Name, n, cfg.MaxDeliver)
			}
			if c.MaxDeliver < -1 {
				t.Errorf("%s: MaxDeliver %d", c.Name, c.MaxDeliver)
			}
		}
	}
}
