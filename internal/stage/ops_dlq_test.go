package stage

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"
)

// A create_invoice call in a currency the example schema does not know yet.
const yenInvoice = `{"customer_id":"cus_9821","currency":"YEN","line_items":[{"sku":"PRO-SEAT","quantity":3,"price_cents":4900}]}`

// withYen is the example tools with YEN added to create_invoice's currencies:
// the fix an operator applies before replaying.
func withYen(t *testing.T, defs []tool.Definition) []tool.Definition {
	t.Helper()
	out := append([]tool.Definition(nil), defs...)
	for i := range out {
		if out[i].Name != "create_invoice" {
			continue
		}
		s := strings.Replace(string(out[i].InputSchema), `"GBP"]`, `"GBP","YEN"]`, 1)
		if s == string(out[i].InputSchema) {
			t.Fatalf("create_invoice schema has no currency enum to extend: %s", s)
		}
		out[i].InputSchema = json.RawMessage(s)
	}
	return out
}

func (o *ops) letters(f dlq.Filter, n int) []dlq.Letter {
	o.t.Helper()
	var ls []dlq.Letter
	testenv.Eventually(o.t, 10*time.Second, 20*time.Millisecond, func() error {
		var err error
		if ls, err = dlq.List(o.ctx, o.js, f); err != nil {
			return err
		}
		if len(ls) != n {
			return fmt.Errorf("%d dead letters, want %d", len(ls), n)
		}
		return nil
	})
	return ls
}

func TestOps_schema_invalid_call_replayed_after_the_fix_executes_once(t *testing.T) {
	o := startOps(t)
	o.publish("resp-yen", "openai-chat", chat("resp-yen", "create_invoice", yenInvoice, "tool_calls"))
	if rs := o.waitResults("resp-yen", 1); rs[0]["failure"] != "schema_invalid" {
		t.Fatalf("result %v, want schema_invalid", rs[0])
	}
	letters := o.letters(dlq.Filter{CallID: "resp-yen-0"}, 1)
	if letters[0].Stage != streams.Validate || letters[0].Failure != "schema_invalid" {
		t.Fatalf("dead letter at %s/%s, want validate/schema_invalid", letters[0].Stage, letters[0].Failure)
	}

	o.apply(withYen(t, o.defs))
	// The fix has reached the validate stage once a fresh YEN call passes it.
	testenv.Eventually(t, 10*time.Second, 50*time.Millisecond, func() error {
		rid := fmt.Sprintf("probe-%d", time.Now().UnixNano())
		o.publish(rid, "openai-chat", chat(rid, "create_invoice", yenInvoice, "tool_calls"))
		if rs := o.waitResults(rid, 1); rs[0]["status"] != "executed" {
			return fmt.Errorf("probe ended %v", rs[0]["status"])
		}
		return nil
	})

	sum, err := dlq.Replay(o.ctx, o.js, letters, dlq.Options{Wait: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Replayed != 1 || sum.Executed != 1 || sum.FailedAgain != 0 || sum.Pending != 0 {
		t.Fatalf("summary %+v, want 1 replayed and executed", sum)
	}
	if n := o.runsOf("resp-yen-0"); n != 1 {
		t.Fatalf("the replayed call ran %d times, want 1", n)
	}
	rec := o.status("resp-yen-0")
	if rec.Status != call.Executed || rec.Replays != 1 {
		t.Fatalf("status %s replays %d, want executed after 1 replay", rec.Status, rec.Replays)
	}

	// Replaying the same dead letter again finds its call settled
	// (executed): it is skipped, nothing runs and nothing counts executed.
	sum, err = dlq.Replay(o.ctx, o.js, letters, dlq.Options{Wait: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Replayed != 0 || sum.Executed != 0 || sum.Skipped != 1 {
		t.Fatalf("second replay summary %+v, want the settled letter skipped", sum)
	}
	if n := o.runsOf("resp-yen-0"); n != 1 {
		t.Fatalf("a second replay ran the call again: %d runs", n)
	}
	if rec = o.status("resp-yen-0"); rec.Replays != 1 || rec.Status != call.Executed {
		t.Fatalf("second replay moved the record: replays %d, status %s", rec.Replays, rec.Status)
	}
}

// bury publishes e as a validate/schema_invalid dead letter, the way the
// pipeline does, without running it through the gates first.
func (o *ops) bury(e call.Envelope) jetstream.PubAckFuture {
	o.t.Helper()
	body, err := e.Marshal()
	if err != nil {
		o.t.Fatal(err)
	}
	m := nats.NewMsg(streams.DLQ(streams.Validate, string(call.SchemaInvalid)))
	m.Header.Set(streams.HeaderCallID, e.CallID)
	m.Header.Set(streams.HeaderResponseID, e.ResponseID)
	m.Header.Set(streams.HeaderTool, e.ToolName)
	m.Data = body
	f, err := o.js.PublishMsgAsync(m)
	if err != nil {
		o.t.Fatal(err)
	}
	return f
}

func TestOps_replay_of_1000_dead_letters_reports_an_accurate_summary(t *testing.T) {
	o := startOps(t)
	const total, valid = 1000, 700
	now := time.Now()
	var futures []jetstream.PubAckFuture
	for i := range total {
		e := call.New(fmt.Sprintf("bulk-%04d", i), 0, now)
		e.Provider, e.ToolName = "openai-chat", "get_weather"
		e.RawArguments = `{"city":7}` // fails the schema again
		if i < valid {
			e.RawArguments = `{"city":"Paris"}` // passes: the schema was fixed since
		}
		sealAs(t, o.seals, streams.Accumulate, &e) // as the gates would have: the replay may enter validate
		e.Arguments = json.RawMessage(e.RawArguments)
		for _, m := range []struct {
			stage string
			to    call.Status
		}{{"parse", call.Parsed}, {"validate", call.SchemaInvalid}, {"repair", call.Failed}} {
			if err := e.Move(m.stage, m.to, now, "/city: want string"); err != nil {
				t.Fatal(err)
			}
			if m.to == call.Parsed {
				sealAs(t, o.seals, streams.Parse, &e)
			}
		}
		e.Failure = call.SchemaInvalid
		futures = append(futures, o.bury(e))
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			t.Fatal(err)
		}
	}
	letters := o.letters(dlq.Filter{Stage: streams.Validate}, total)

	var mu sync.Mutex
	last := map[string][2]int{}
	sum, err := dlq.Replay(o.ctx, o.js, letters, dlq.Options{Wait: 90 * time.Second, Progress: func(phase string, done, n int) {
		mu.Lock()
		last[phase] = [2]int{done, n}
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Selected != total || sum.Replayed != total || sum.Skipped != 0 {
		t.Fatalf("summary %+v, want %d selected and replayed", sum, total)
	}
	if sum.Executed != valid || sum.FailedAgain != total-valid || sum.Pending != 0 {
		t.Fatalf("summary executed %d failed again %d pending %d, want %d / %d / 0", sum.Executed, sum.FailedAgain, sum.Pending, valid, total-valid)
	}
	if sum.Outcomes[call.Executed] != valid || sum.Outcomes[call.SchemaInvalid] != total-valid {
		t.Fatalf("outcomes %v", sum.Outcomes)
	}
	if n := o.executed.Load(); n != valid {
		t.Fatalf("executor ran %d times, want %d", n, valid)
	}
	if last["publish"] != [2]int{total, total} || last["wait"] != [2]int{total, total} {
		t.Fatalf("progress ended at %v, want %d/%d for both phases", last, total, total)
	}
}
