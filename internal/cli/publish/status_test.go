package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/clitest"
	"github.com/toolgate/toolgate/internal/cli/operate"
)

// A call's whole story: status CALL-ID shows where it ended, its result
// and its tool-result message; status RESPONSE-ID lists its calls (before:
// `nats: key not found`); results prints every outcome with exit 3 when one
// is not ok; calls ls shows the failed call at validate, where it failed.
func TestStatus_call_and_response_show_result_message_and_failure_stage(t *testing.T) {
	r := clitest.StartStoryRig(t)
	r.Publish(t, "story-1",
		clitest.ToolCall{ID: "call_ok", Name: "get_weather", Args: `{"city":"Paris"}`},
		clitest.ToolCall{ID: "call_bad", Name: "get_weather", Args: `{"city":5}`})

	out := r.WaitFor(t, resultsCmd, []string{"story-1"}, "story-1-0", "story-1-1", "result    ok, executed", "schema_invalid")
	if _, err := r.Run(resultsCmd, "story-1"); clitest.Code(err) != exitResultsNotOK {
		t.Fatalf("results with a failed call: exit %d (%v), want %d\n%s", clitest.Code(err), err, exitResultsNotOK, out)
	}
	for _, want := range []string{`"temp_c": 21`, "message   (the tool-result message for openai-chat", `"tool_call_id": "call_ok"`, "error     "} {
		if !strings.Contains(out, want) {
			t.Errorf("results lacks %q:\n%s", want, out)
		}
	}

	// Each call's status record is published before its result but
	// stored by its own stream (the calls bucket): read until both ended.
	r.WaitFor(t, statusCmd, []string{"story-1-0"}, "status    executed")
	r.WaitFor(t, statusCmd, []string{"story-1-1"}, "status    failed")
	out, err := r.Run(statusCmd, "story-1-0")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"status    executed", "now       ended ok at execute", "result    ok, executed", `"temp_c": 21`, `"tool_call_id": "call_ok"`, "TIME", "accumulate"} {
		if !strings.Contains(out, want) {
			t.Errorf("status of an executed call lacks %q:\n%s", want, out)
		}
	}
	out, err = r.Run(statusCmd, "story-1-1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "now       ended, not ok at validate") {
		t.Errorf("status of a schema_invalid call does not name validate:\n%s", out)
	}

	// --json: one object {status, waiting, result} for scripts.
	out, err = r.Run(statusCmd, "story-1-0", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Status  map[string]any  `json:"status"`
		Waiting *map[string]any `json:"waiting"`
		Result  struct {
			OK      bool            `json:"ok"`
			Result  json.RawMessage `json:"result"`
			Message json.RawMessage `json:"message"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("status --json is not one object: %v\n%s", err, out)
	}
	if s.Status["call_id"] != "story-1-0" || !s.Result.OK || len(s.Result.Message) == 0 || !strings.Contains(string(s.Result.Result), "temp_c") || s.Waiting != nil {
		t.Errorf("status --json: %s", out)
	}

	// A response id lists its calls.
	out, err = r.Run(statusCmd, "story-1")
	if err != nil {
		t.Fatalf("status RESPONSE-ID: %v", err)
	}
	for _, want := range []string{"response  story-1", "calls     2", "story-1-0  get_weather  executed", "story-1-1  get_weather  failed (schema_invalid)"} {
		if !strings.Contains(out, want) {
			t.Errorf("status of a response lacks %q:\n%s", want, out)
		}
	}

	// Point 14: calls ls says where the call failed.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Neither call waited, was repaired or replayed: neither wrote a
	// status record (issue 30), and everything above was read from their
	// results; calls ls lists both.
	kv, err := r.JS.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"story-1-0", "story-1-1"} {
		if _, err := kv.Get(ctx, id); !errors.Is(err, jetstream.ErrKeyNotFound) {
			t.Errorf("%s: a status record is stored (%v); its result is its record", id, err)
		}
	}
	if all, err := scanCalls(ctx, r.JS, callFilter{response: "story-1"}); err != nil || len(all) != 2 {
		t.Fatalf("calls ls --response story-1: %v (%v), want both calls", all, err)
	}
	recs, err := scanCalls(ctx, r.JS, callFilter{response: "story-1", stage: streams.Validate})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].CallID != "story-1-1" {
		t.Fatalf("calls ls --stage validate: %d records (%v), want story-1-1", len(recs), recs)
	}
	var b bytes.Buffer
	if err := printCalls(&b, recs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), " validate ") || strings.Contains(b.String(), " repair ") {
		t.Errorf("calls ls stage column:\n%s", b.String())
	}
}

// An unknown id says what to do, and results says nothing yet with exit 4.
func TestStatus_unknown_id_says_what_it_looked_for(t *testing.T) {
	r := clitest.StartStoryRig(t)
	_, err := r.Run(statusCmd, "no-such-thing")
	if err == nil || !strings.Contains(err.Error(), "no call or response no-such-thing (is it a call id like no-such-thing-0, or a response id?") || strings.Contains(err.Error(), "key not found") {
		t.Fatalf("status of an unknown id: %v", err)
	}
	out, err := r.Run(resultsCmd, "no-such-thing")
	if clitest.Code(err) != exitResultsWaiting || !strings.Contains(out, "no outcome yet for response no-such-thing") {
		t.Fatalf("results of an unknown id: exit %d (%v)\n%s", clitest.Code(err), err, out)
	}
	if _, err := r.Run(statusCmd, "a.b"); clitest.Code(err) != 2 {
		t.Fatalf("status a.b: exit %d (%v), want 2", clitest.Code(err), err)
	}
}

// A NATS server without toolgate's streams: say so, not "stream not found".
func TestStatus_server_without_toolgate_streams_says_run_up_or_streams_apply(t *testing.T) {
	t.Setenv("TOOLGATE_SECRETS", t.TempDir())
	t.Setenv("TOOLGATE_NATS_USER", "")
	srv := testenv.RunJetStream(t)
	for _, fn := range []func(*bytes.Buffer, []string) error{statusCmd, resultsCmd} {
		var b bytes.Buffer
		err := fn(&b, []string{"--nats", srv.ClientURL(), "r1-0"})
		if err == nil || !strings.Contains(err.Error(), "this NATS server has no toolgate streams") || !strings.Contains(err.Error(), "toolgate streams apply") {
			t.Errorf("against a bare server: %v", err)
		}
	}
}

// A call waiting for a human: status shows the wait with its expiry and
// the command that ends it; results --follow prints the outcome once the
// call is approved, and exits 0.
func TestStatus_approval_wait_and_results_follow_until_approved(t *testing.T) {
	r := clitest.StartStoryRig(t)
	r.Publish(t, "story-ap", clitest.ToolCall{ID: "call_close", Name: "close_account", Args: `{"id":"c-7"}`})
	out := r.WaitFor(t, statusCmd, []string{"story-ap-0"}, "waiting for approval", " until ", "(expires in ", "toolgate approve story-ap-0 --by NAME")
	if !strings.Contains(out, "status    approval_required") {
		t.Errorf("status of a waiting call:\n%s", out)
	}
	if _, err := r.Run(resultsCmd, "story-ap"); clitest.Code(err) != exitResultsWaiting {
		t.Fatalf("results of a waiting call: exit %d (%v), want %d", clitest.Code(err), err, exitResultsWaiting)
	}
	out, err := r.Run(resultsCmd, "story-ap", "--follow", "--timeout", "300ms")
	if clitest.Code(err) != exitResultsWaiting || !strings.Contains(out, "story-ap-0  close_account  approval_required") {
		t.Fatalf("results --follow that times out: exit %d (%v)\n%s", clitest.Code(err), err, out)
	}

	type res struct {
		out string
		err error
	}
	done := make(chan res, 1)
	go func() {
		out, err := r.Run(resultsCmd, "story-ap", "--follow", "--timeout", "60s")
		done <- res{out, err}
	}()
	kv, err := r.JS.KeyValue(context.Background(), streams.BucketApprovals)
	if err != nil {
		t.Fatal(err)
	}
	store := approval.NewStore(kv)
	rec, _, err := store.Get(context.Background(), "story-ap-0")
	if err != nil {
		t.Fatal(err)
	}
	if err := operate.Approve([]string{"story-ap-0", "--nats", r.URL, "--by", "ops", "--hash", rec.ArgsHash}); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.err != nil || !strings.Contains(got.out, "result    ok, executed") || !strings.Contains(got.out, `"tool": "close_account"`) {
		t.Fatalf("results --follow: %v\n%s", got.err, got.out)
	}
	// It waited, so its record was written and its final one is too: the
	// record never goes on saying it waits (issue 30).
	calls, err := r.JS.KeyValue(context.Background(), streams.BucketCalls)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		e, err := calls.Get(context.Background(), "story-ap-0")
		if err != nil {
			return err
		}
		if !strings.Contains(string(e.Value()), `"status":"executed"`) {
			return fmt.Errorf("record %s, want executed", e.Value())
		}
		return nil
	})
}

// A streamed response still open: status says how many events, how long
// since the last, and when it ends unless it completes.
func TestStatus_open_stream_shows_events_and_its_idle_end(t *testing.T) {
	r := clitest.StartStoryRig(t)
	m := []byte(`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"thinking"}}]}`)
	for i, data := range [][]byte{m, m} {
		msg := clitest.NatsMsg(streams.InStream("story-st"), data)
		msg.Header.Set(streams.HeaderProvider, "openai-chat")
		msg.Header.Set(streams.HeaderResponseID, "story-st")
		msg.Header.Set(streams.HeaderSeq, []string{"1", "2"}[i])
		if _, err := r.JS.PublishMsg(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
	}
	out, err := r.Run(statusCmd, "story-st")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"stream    stream open: 2 events, last ", "ends transport_incomplete at ", "unless it completes", "calls     0"} {
		if !strings.Contains(out, want) {
			t.Errorf("status of an open stream lacks %q:\n%s", want, out)
		}
	}
	if _, err := r.Run(resultsCmd, "story-st"); clitest.Code(err) != exitResultsWaiting {
		t.Errorf("results of an open stream: exit %d (%v), want %d", clitest.Code(err), err, exitResultsWaiting)
	}
}

// A response that proposes no call has its own result: results exits 0
// and prints it; status of its id shows it.
func TestResults_response_without_calls_prints_its_own_result(t *testing.T) {
	r := clitest.StartStoryRig(t)
	r.Publish(t, "story-none")
	out := r.WaitFor(t, resultsCmd, []string{"story-none"}, "no_tool_calls")
	if _, err := r.Run(resultsCmd, "story-none"); err != nil {
		t.Fatalf("results of a response without calls: %v\n%s", err, out)
	}
	out, err := r.Run(statusCmd, "story-none")
	if err != nil || !strings.Contains(out, "result    ok, no_tool_calls") || !strings.Contains(out, "calls     0") {
		t.Fatalf("status of a response without calls: %v\n%s", err, out)
	}
	out, err = r.Run(resultsCmd, "story-none", "--json", "--follow")
	if err != nil || !strings.Contains(out, `{"response_result":{"response_id":"story-none"`) {
		t.Fatalf("results --json --follow of a finished response: %v\n%s", err, out)
	}
}

// What the buckets and streams hold is not trusted: a status record that
// is not toolgate's is an error naming it, a result that is not JSON is
// skipped, and control characters in a stored result are never printed raw.
func TestStatus_hostile_records_and_results_are_reported_not_trusted(t *testing.T) {
	r := clitest.StartStoryRig(t)
	ctx := context.Background()
	kv, err := r.JS.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "evil-0", []byte(`{"call_id":"someone-else","status":"executed"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(statusCmd, "evil-0"); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("a forged status record: %v", err)
	}
	for _, data := range []string{`not json`, `{"neither":1}`,
		`{"call_id":"evil2-0","response_id":"evil2","tool":"x\u001b[2J","status":"executed","ok":true,"text":"\u001b]0;pwned\u0007","message":{"content":"\u001b[31m"}}`} {
		if _, err := r.JS.Publish(ctx, streams.Results("", "evil2"), []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"evil2"}, {"evil2", "--follow", "--timeout", "2s"}} {
		out, err := r.Run(resultsCmd, args...)
		if err != nil {
			t.Errorf("results %v: %v", args, err)
		}
		if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, "evil2-0") {
			t.Errorf("results %v printed control characters or lost the call:\n%q", args, out)
		}
	}
	out, err := r.Run(statusCmd, "evil2")
	if err != nil || strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("status of the response: %v\n%q", err, out)
	}
}

// results --follow on a stream still open: it waits, the stream completes
// into a call, the follower finds the call and prints its outcome, exit 0.
func TestResults_follow_an_open_stream_until_its_call_ends(t *testing.T) {
	r := clitest.StartStoryRig(t)
	events := []string{
		`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_s","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
		`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Oslo\"}"}}]}}]}`,
		`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	}
	send := func(i int) {
		msg := clitest.NatsMsg(streams.InStream("story-fs"), []byte(events[i]))
		msg.Header.Set(streams.HeaderProvider, "openai-chat")
		msg.Header.Set(streams.HeaderResponseID, "story-fs")
		msg.Header.Set(streams.HeaderSeq, []string{"1", "2", "3"}[i])
		if _, err := r.JS.PublishMsg(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
	}
	send(0)
	send(1)
	r.WaitFor(t, statusCmd, []string{"story-fs"}, "stream open: 2 events")
	var out testenv.SyncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runResults(&out, []string{"--nats", r.URL, "story-fs", "--follow", "--timeout", "60s"})
	}()
	// The follower has seen the stream open, with no call yet.
	testenv.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
		if !strings.Contains(out.String(), "story-fs stream open: 2 events") {
			return fmt.Errorf("no open stream in %q", out.String())
		}
		return nil
	})
	send(2)
	if err := <-done; err != nil || !strings.Contains(out.String(), "story-fs-0  get_weather  executed") || !strings.Contains(out.String(), `"tool_call_id": "call_s"`) {
		t.Fatalf("results --follow of a stream: %v\n%s", err, out.String())
	}
}

func statusCmd(w *bytes.Buffer, args []string) error  { return RunStatus(w, args) }
func resultsCmd(w *bytes.Buffer, args []string) error { return runResults(w, args) }
