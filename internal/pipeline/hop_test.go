package pipeline

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// The next gate gets the hop encoding, or JSON with JSONHops (a rollout
// from a version that reads only JSON); a gate reads either, so stages of
// both settings chain; a dead letter is JSON whatever the setting, for the
// operator who reads and replays it.
func TestOutputs_hop_encoding_json_for_a_rollout_and_dead_letters_json(t *testing.T) {
	e := call.New("resp-hop", 0, time.Unix(1, 0))
	e.ToolName, e.RawArguments = "get_weather", `{"city":"Paris"}`
	if err := e.Move("parse", call.Parsed, time.Unix(2, 0)); err != nil {
		t.Fatal(err)
	}
	next := func(em *Emitter, e call.Envelope) []byte {
		t.Helper()
		outs, err := em.Outputs("parse", e)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			if o.Subject == streams.Gate(streams.Validate) {
				return o.Data
			}
		}
		t.Fatalf("no output to validate in %v", outs)
		return nil
	}
	hop, js := next(&Emitter{}, e), next(&Emitter{JSONHops: true}, e)
	if hop[0] != 0 || js[0] != '{' {
		t.Fatalf("hop starts %q, JSON hop starts %q", hop[:4], js[:1])
	}
	// A gate of either setting reads what the other wrote.
	seen := map[string]call.Envelope{}
	for name, em := range map[string]*Emitter{"binary": {}, "json": {JSONHops: true}} {
		h := em.Handler(streams.Validate, func(_ context.Context, e call.Envelope) ([]call.Envelope, error) {
			seen[name] = e
			return nil, nil
		})
		for _, data := range [][]byte{hop, js} {
			if _, err := h(context.Background(), worker.Msg{Data: data}); err != nil {
				t.Fatalf("%s gate: %v", name, err)
			}
			if got := seen[name]; got.CallID != e.CallID || got.Status != call.Parsed || got.RawArguments != e.RawArguments || !reflect.DeepEqual(got.History, e.History) {
				t.Fatalf("%s gate read %+v", name, got)
			}
		}
	}
	// A failed call's dead letter is JSON.
	e.Abort("validate", "schema_invalid", context.Canceled, time.Unix(3, 0))
	outs, err := (&Emitter{}).Outputs("validate", e)
	if err != nil {
		t.Fatal(err)
	}
	var dead int
	for _, o := range outs {
		if len(o.Header.Get(streams.HeaderFailure)) > 0 && o.Data[0] == '{' {
			dead++
		}
	}
	if dead != 1 {
		t.Fatalf("%d JSON dead letters in %v, want 1", dead, outs)
	}
}
