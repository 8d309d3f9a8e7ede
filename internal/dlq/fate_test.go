package dlq

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
	"github.com/toolgate/toolgate/streams"
)

// record stores e's status record as the stages write it.
func (r rig) record(e call.Envelope) {
	r.t.Helper()
	kv, err := r.js.KeyValue(r.ctx, streams.BucketCalls)
	if err != nil {
		r.t.Fatal(err)
	}
	b, err := json.Marshal(pipeline.StatusOf(e))
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := kv.Put(r.ctx, e.CallID, b); err != nil {
		r.t.Fatal(err)
	}
}

// after is e replayed once more and moved to st (with class failure when
// st is failed).
func after(t *testing.T, e call.Envelope, st, failure call.Status) call.Envelope {
	t.Helper()
	e.History = append([]call.Step(nil), e.History...)
	e.Reset(streams.Validate, call.Parsed, time.Now(), "replayed")
	e.Replays++
	e.Status, e.Failure = st, failure
	e.History = append(e.History, call.Step{Stage: streams.Execute, Status: st, At: time.Now()})
	return e
}

func TestFates_read_what_became_of_each_letter_from_the_status_record(t *testing.T) {
	r := newRig(t)
	cases := []struct {
		rid  string
		then func(call.Envelope) call.Envelope // the record after the letter; nil: as written
		want string
	}{
		{"open", nil, "not replayed"},
		{"done", func(e call.Envelope) call.Envelope { return after(t, e, call.Executed, "") }, "replayed → executed"},
		{"again", func(e call.Envelope) call.Envelope { return after(t, e, call.Failed, call.SchemaInvalid) }, "replayed → failed again (schema_invalid)"},
		{"flight", func(e call.Envelope) call.Envelope { return after(t, e, call.ApprovalRequired, "") }, "replayed → waiting (approval_required)"},
	}
	for _, c := range cases {
		e := failed(t, c.rid, "get_weather")
		r.kill("repair", e)
		if c.then != nil {
			r.record(c.then(e))
		}
	}
	r.rawInput("raw")
	letters, err := List(r.ctx, r.js, Filter{})
	if err != nil || len(letters) != len(cases)+1 {
		t.Fatalf("list: %v (%d)", err, len(letters))
	}
	fates, err := Fates(r.ctx, r.js, letters)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if got := fates[letters[i].Seq]; got.String() != c.want || got.Settled() != (c.rid == "done") {
			t.Errorf("%s: fate %q (settled %v), want %q", c.rid, got, got.Settled(), c.want)
		}
	}
	if got := fates[letters[len(cases)].Seq]; got.Kind != FateUntracked || got.Settled() {
		t.Errorf("input letter: fate %+v", got)
	}
}

func TestFates_older_letter_of_a_call_is_superseded(t *testing.T) {
	r := newRig(t)
	first := failed(t, "r1", "get_weather")
	r.kill("repair", first)
	second := failed(t, "r1", "get_weather")
	second.Replays = 1 // failed again after a replay
	r.kill("repair", second)
	letters, err := List(r.ctx, r.js, Filter{})
	if err != nil || len(letters) != 2 {
		t.Fatalf("list: %v (%d)", err, len(letters))
	}
	fates, err := Fates(r.ctx, r.js, letters)
	if err != nil {
		t.Fatal(err)
	}
	if f := fates[letters[0].Seq]; f.Kind != FateSuperseded || f.By != letters[1].Seq || !f.Settled() {
		t.Errorf("older letter: %+v, want superseded by %d", f, letters[1].Seq)
	}
	if f := fates[letters[1].Seq]; f.Kind != FateOpen {
		t.Errorf("newer letter: %+v, want open", f)
	}
}

func TestReplay_of_a_letter_whose_call_executed_since_is_skipped_and_not_counted(t *testing.T) {
	r := newRig(t)
	e := failed(t, "r1", "get_weather")
	r.kill("repair", e)
	r.record(after(t, e, call.Executed, ""))
	letters, err := List(r.ctx, r.js, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Replay(r.ctx, r.js, letters, Options{Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Replayed != 0 || sum.Executed != 0 || sum.Skipped != 1 || !strings.Contains(sum.Items[0].Skip, "settled") {
		t.Fatalf("summary %+v, want the settled letter skipped and nothing counted executed", sum)
	}
	if n := len(r.gateMsgs(streams.Validate)); n != 0 {
		t.Fatalf("a settled letter was republished (%d messages)", n)
	}
}

// denied is a call a human denied at the policy gate, sealed by every gate
// before it.
func denied(t *testing.T, rid string) call.Envelope {
	t.Helper()
	now := time.Now()
	e := call.New(rid, 0, now)
	e.Provider, e.ToolName, e.RawArguments = "openai-chat", "delete_customer_account", `{"customer_id":"cus_1"}`
	kr := sealtest.Keys(t)
	if err := kr.Seal(seal.Accumulate, &e); err != nil {
		t.Fatal(err)
	}
	e.Arguments = []byte(e.RawArguments)
	for _, m := range []struct {
		stage string
		to    call.Status
	}{{"parse", call.Parsed}, {"validate", call.Validated}, {"business", call.BusinessValid}, {"policy", call.ApprovalRequired}, {"policy", call.ApprovalDenied}} {
		if err := e.Move(m.stage, m.to, now); err != nil {
			t.Fatal(err)
		}
		if seal.Passes(m.stage, m.to) {
			if err := kr.Seal(m.stage, &e); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.Errors = []string{"denied by bob: not this customer"}
	return e
}

func TestReplay_skips_a_human_denial_unless_asked_for(t *testing.T) {
	r := newRig(t)
	r.kill(streams.Policy, denied(t, "r1"))
	letters, err := List(r.ctx, r.js, Filter{})
	if err != nil || len(letters) != 1 || letters[0].Failure != string(call.ApprovalDenied) {
		t.Fatalf("list: %v %+v", err, letters)
	}
	sum, err := Replay(r.ctx, r.js, letters, Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Replayed != 0 || sum.Skipped != 1 || !strings.Contains(sum.Items[0].Skip, "human denied") || !strings.Contains(sum.Items[0].Skip, "--failure approval_denied") {
		t.Fatalf("unasked replay of a denial: %+v", sum)
	}
	sum, err = Replay(r.ctx, r.js, letters, Options{DryRun: true, Denied: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Replayed != 1 || sum.Items[0].Stage != streams.Policy {
		t.Fatalf("asked-for replay of a denial: %+v", sum)
	}
}

func TestReplay_limit_takes_the_oldest_and_leaves_the_rest(t *testing.T) {
	r := newRig(t)
	r.kill(streams.Policy, denied(t, "d0")) // skipped: does not count toward the limit
	for _, rid := range []string{"r1", "r2", "r3"} {
		r.kill("repair", failed(t, rid, "get_weather"))
	}
	letters, err := List(r.ctx, r.js, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Replay(r.ctx, r.js, letters, Options{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Selected != 3 || sum.Replayed != 2 || sum.Skipped != 1 || sum.Beyond != 1 {
		t.Fatalf("summary %+v, want 3 selected (2 replayed, 1 skipped), 1 beyond the limit", sum)
	}
	msgs := r.gateMsgs(streams.Validate)
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.Headers().Get(streams.HeaderCallID))
	}
	if strings.Join(ids, ",") != "r1-0,r2-0" {
		t.Fatalf("replayed %v, want the two oldest", ids)
	}
}
