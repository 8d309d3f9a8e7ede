package pipeline

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/worker"
)

// Two pipelines in one process (two stage Sets, as a test or an embedding
// program runs them) each hand their gates their own emitter: each counts
// its own transitions and cuts to its own connection's max payload.
func TestEmitter_two_pipelines_in_one_process_do_not_share_hooks(t *testing.T) {
	var a, b []string
	ea := &Emitter{Transition: func(stage string, e call.Envelope) { a = append(a, stage+":"+e.CallID) }, MaxPayload: 64 << 10}
	eb := &Emitter{Transition: func(stage string, e call.Envelope) { b = append(b, stage+":"+e.CallID) }}
	pass := func(_ context.Context, e call.Envelope) ([]call.Envelope, error) {
		return []call.Envelope{e}, nil
	}
	ha, hb := ea.Handler("parse", pass), eb.Handler("validate", pass)

	ca, cb := call.New("resp-a", 0, time.Unix(0, 0)), call.New("resp-b", 0, time.Unix(0, 0))
	for _, run := range []struct {
		h worker.Handler
		e call.Envelope
	}{{ha, ca}, {hb, cb}, {ha, ca}} {
		data, err := run.e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := run.h(context.Background(), worker.Msg{Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eb.Outputs("accumulate", cb); err != nil {
		t.Fatal(err)
	}
	if want := []string{"parse:" + ca.CallID, "parse:" + ca.CallID}; !slices.Equal(a, want) {
		t.Errorf("pipeline a saw %v, want %v", a, want)
	}
	if want := []string{"validate:" + cb.CallID, "accumulate:" + cb.CallID}; !slices.Equal(b, want) {
		t.Errorf("pipeline b saw %v, want %v", b, want)
	}
	if ea.maxPayload() != 64<<10 || eb.maxPayload() != DefaultMaxPayload {
		t.Errorf("max payloads %d and %d, want %d and the default %d", ea.maxPayload(), eb.maxPayload(), 64<<10, DefaultMaxPayload)
	}
}

// A nil emitter has no hooks and the default max payload: gates built
// without one (tests) still emit.
func TestEmitter_nil_has_no_hooks_and_the_default_max_payload(t *testing.T) {
	var em *Emitter
	outs, err := em.Outputs("accumulate", call.New("resp-nil", 0, time.Unix(0, 0)))
	if err != nil || len(outs) == 0 {
		t.Fatalf("outputs %v, %v: want messages and no error", subjects(outs), err)
	}
	if em.maxPayload() != DefaultMaxPayload || em.sensitive("x") != nil {
		t.Error("a nil emitter has hooks or a max payload")
	}
}
