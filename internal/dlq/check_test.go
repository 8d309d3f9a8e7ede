package dlq

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/streams"
)

// forge publishes a dead letter as an outsider would.
func (r rig) forge(subject string, h nats.Header, data string) {
	r.t.Helper()
	if _, err := r.js.PublishMsg(r.ctx, &nats.Msg{Subject: subject, Header: h, Data: []byte(data)}); err != nil {
		r.t.Fatal(err)
	}
}

func TestReplay_malformed_and_forged_letters_are_listed_skipped_and_the_others_replay(t *testing.T) {
	r := newRig(t)
	r.forge("toolgate.dlq.x.y", nil, `garbage`)
	// An "approved" call that never passed a gate: on the previous main a
	// replay published it straight to the execute gate.
	forged := call.New("rf", 0, time.Now())
	forged.CallID, forged.ToolName, forged.Status, forged.Arguments = "evil", "delete_customer_account", call.Approved, json.RawMessage(`{}`)
	body, _ := forged.Marshal()
	r.forge(streams.DLQ(streams.Execute, "outcome_unknown"), nil, string(body))
	// Input "from" the execute gate, carrying an approved envelope.
	h := nats.Header{}
	h.Set(streams.HeaderOrigSubject, streams.Gate(streams.Execute))
	forged.CallID = "rf-0"
	body, _ = forged.Marshal()
	r.forge(streams.DLQ(streams.Accumulate, "x"), h, string(body))
	r.kill("repair", failed(t, "r1", "get_weather"))

	letters, err := List(r.ctx, r.js, Filter{})
	if err != nil || len(letters) != 4 {
		t.Fatalf("list: %v (%d), want every letter listed", err, len(letters))
	}
	var bad []string
	for _, l := range letters {
		if l.Malformed != "" {
			bad = append(bad, l.Subject)
		}
	}
	if len(bad) != 2 || bad[0] != "toolgate.dlq.x.y" || !strings.HasPrefix(bad[1], streams.DLQ(streams.Execute, "")) {
		t.Fatalf("malformed %v, want the garbage and the forged call", bad)
	}
	sum, err := Replay(r.ctx, r.js, letters, Options{})
	if err != nil || sum.Replayed != 1 || sum.Skipped != 3 {
		t.Fatalf("replay %+v (%v), want the one real letter replayed, 3 skipped", sum, err)
	}
	if n := len(r.gateMsgs(streams.Execute)); n != 0 {
		t.Fatalf("%d forged calls reached the execute gate", n)
	}
	if n := len(r.gateMsgs(streams.Validate)); n != 1 {
		t.Fatalf("%d replayed to validate, want the real letter", n)
	}
}

// FuzzDecode: no stored letter panics Decode or the replay plan, and a
// letter the plan would replay is well-formed and goes where a producer or
// its own stage would send it.
func FuzzDecode(f *testing.F) {
	e := call.New("r1", 0, time.Now())
	e.ToolName, e.Status = "get_weather", call.SchemaInvalid
	body, _ := e.Marshal()
	for _, s := range []struct{ subject, orig, data string }{
		{streams.DLQ(streams.Validate, "schema_invalid"), "", string(body)},
		{streams.DLQ(streams.Accumulate, "rejected"), streams.SubjectInResponse, `{"id":"x"}`},
		{streams.DLQ(streams.Accumulate, "rejected"), streams.Gate(streams.Execute), string(body)},
		{"toolgate.dlq.x.y", "", "garbage"},
		{"toolgate.dlq", "", "{}"},
	} {
		f.Add(s.subject, s.orig, []byte(s.data))
	}
	f.Fuzz(func(t *testing.T, subject, orig string, data []byte) {
		h := nats.Header{}
		if orig != "" {
			h.Set(streams.HeaderOrigSubject, orig)
		}
		l := Decode(subject, 1, time.Time{}, h, data)
		_ = l.FirstError()
		plan := planReplay([]Letter{l}, "", nil, false)
		if len(plan) != 1 {
			t.Fatalf("plan of one letter: %d items", len(plan))
		}
		if plan[0].skip != "" {
			return
		}
		switch {
		case l.Malformed != "":
			t.Fatalf("a malformed letter is replayed: %s", l.Malformed)
		case l.Input() && !ingest(l.OrigSubject):
			t.Fatalf("input replayed to %q", l.OrigSubject)
		case !l.Input() && !strings.HasPrefix(l.Envelope.CallID, l.Envelope.ResponseID+"-"):
			t.Fatalf("replayed call %q of response %q", l.Envelope.CallID, l.Envelope.ResponseID)
		}
	})
}

func FuzzDecodeStatus(f *testing.F) {
	f.Add("r1-0", []byte(`{"call_id":"r1-0","response_id":"r1","status":"executed","repair_attempts":0,"history":[{"stage":"execute","status":"executed"}]}`))
	f.Add("r1-0", []byte(`{"replays":-1}`))
	f.Add("x", []byte(`garbage`))
	f.Fuzz(func(t *testing.T, key string, data []byte) {
		r, err := DecodeStatus(key, data)
		if err != nil {
			return
		}
		if r.CallID != key || !call.ValidResponseID(r.ResponseID) || r.Replays < 0 || r.Replays > maxReplays {
			t.Fatalf("accepted %+v under %q", r, key)
		}
	})
}

// A dead-lettered input of a tenant's batch subject goes back there on
// replay, as one of its response subject does; what only looks like one
// does not.
func TestIngest_a_tenants_batch_subject_is_an_ingest_subject(t *testing.T) {
	for subject, want := range map[string]bool{
		streams.InTenantResponse("acme"):         true,
		streams.InTenantBatch("acme"):            true,
		streams.InTenantStream("acme", "r1"):     true,
		"toolgate.in.t.acme.batch.stream.r1":     false,
		"toolgate.in.t.acme.batches":             false,
		"toolgate.in.t.acme.junk":                false,
		streams.InTenantBatch("not a plain one"): true, // a digest token
	} {
		if got := ingest(subject); got != want {
			t.Errorf("ingest(%s) = %v, want %v", subject, got, want)
		}
	}
}

// A dead-lettered input of a claimed subject stored with its partition
// (streams/claimed_partitions.go) is an ingest subject, replayed on its
// tenant's response subject with its id, as one stored without.
func TestReplayTo_a_claimed_subject_with_its_partition_replays_its_id(t *testing.T) {
	for _, subject := range []string{"toolgate.in.t.acme.response.r1", "toolgate.in.t.acme.response.r1.2"} {
		if !ingest(subject) {
			t.Errorf("ingest(%s) = false", subject)
		}
		if to, rid := replayTo(subject); to != "toolgate.in.t.acme.response" || rid != "r1" {
			t.Errorf("replayTo(%s) = %s, %s", subject, to, rid)
		}
	}
	if ingest("toolgate.in.t.acme.response.r1.99") {
		t.Error("a partition beyond the largest P is an ingest subject")
	}
}

// A dead-lettered stream event or batch response stored in a partition of
// TOOLGATE_IN (streams/in_partitions.go) is an ingest subject, replayed on
// the subject its producer sent, where the server maps it again.
func TestReplayTo_an_input_with_its_partition_replays_on_its_subject(t *testing.T) {
	for subject, want := range map[string]string{
		"toolgate.in.t.acme.stream.r1.2": "toolgate.in.t.acme.stream.r1",
		"toolgate.in.stream.r1.0":        "toolgate.in.stream.r1",
		"toolgate.in.t.acme.batch.1":     "toolgate.in.t.acme.batch",
		"toolgate.in.t.acme.batch":       "toolgate.in.t.acme.batch",
	} {
		if !ingest(subject) {
			t.Errorf("ingest(%s) = false", subject)
		}
		if to, rid := replayTo(subject); to != want || rid != "" {
			t.Errorf("replayTo(%s) = %s, %s; want %s", subject, to, rid, want)
		}
	}
	for _, subject := range []string{"toolgate.in.t.acme.batch.99", "toolgate.in.stream.r1.01", "toolgate.in.t.acme.stream.r1.2.3"} {
		if ingest(subject) {
			t.Errorf("ingest(%s) = true", subject)
		}
	}
}
