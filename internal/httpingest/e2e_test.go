package httpingest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/streams"
)

func TestIngest_posted_response_runs_and_its_outcome_is_read_back(t *testing.T) {
	in := startIngest(t, nil, nil, nil)
	var a Accepted
	code := do(t, "POST", in.url+RouteResponses, as("", map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Response-Id": "http-inv-1"}),
		example(t, "valid-invoice.json"), &a)
	if code != http.StatusAccepted || a.ResponseID != "http-inv-1" || a.Kind != "response" || a.Duplicate || a.Outcomes != "/v1/responses/http-inv-1/outcomes" {
		t.Fatalf("POST: %d %+v", code, a)
	}
	var o Outcomes
	if code := do(t, "GET", in.url+a.Outcomes+"?wait=50s&calls=1", as("", nil), nil, &o); code != http.StatusOK {
		t.Fatalf("GET: %d", code)
	}
	rs := results(t, o)
	if !o.Complete || o.Calls != 1 || len(rs) != 1 || rs[0].Tool != "create_invoice" || rs[0].Status != "executed" || !strings.Contains(string(rs[0].Result), `"done":"create_invoice"`) {
		t.Fatalf("outcomes %+v", o)
	}
	// A valid call writes no status record (issue 30): the outcome is its
	// record, with its history and the record's fields.
	var rec struct {
		History       []struct{ Stage, Status string } `json:"history"`
		ArgumentsHash string                           `json:"arguments_hash"`
		Identity      string                           `json:"identity"`
	}
	if err := json.Unmarshal(o.Outcomes[0], &rec); err != nil || len(rec.History) < 5 || rec.History[len(rec.History)-1].Status != "executed" ||
		rec.ArgumentsHash == "" || rec.Identity != "unverified" {
		t.Fatalf("outcome as the call's record: %+v (%v)\n%s", rec, err, o.Outcomes[0])
	}
	_, admin := in.pipe.Connect(t, authz.Admin)
	kv, err := admin.KeyValue(context.Background(), streams.BucketCalls)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(context.Background(), rs[0].CallID); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("%s: a status record is stored (%v)", rs[0].CallID, err)
	}
	// The same POST again is a duplicate: nothing new ran, and the
	// outcome is still there to read.
	if code := do(t, "POST", in.url+RouteResponses, as("", map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Response-Id": "http-inv-1"}),
		example(t, "valid-invoice.json"), &a); code != http.StatusOK || !a.Duplicate {
		t.Fatalf("re-POST: %d %+v", code, a)
	}
	// Without ?calls= it is complete too: the result says how many calls
	// the response proposed.
	if code := do(t, "GET", in.url+a.Outcomes, as("", nil), nil, &o); code != http.StatusOK || o.Calls != 1 || o.Expected != 1 || !o.Complete {
		t.Fatalf("GET without wait: %d %+v", code, o)
	}
}

func TestIngest_transcript_is_published_event_by_event_with_the_provider_detected(t *testing.T) {
	in := startIngest(t, nil, nil, nil)
	var a Accepted
	code := do(t, "POST", in.url+RouteResponses, as("", map[string]string{"Content-Type": "text/event-stream"}), example(t, "anthropic-weather.sse"), &a)
	if code != http.StatusAccepted || a.Kind != "stream" || a.Provider != "anthropic" || a.Events < 5 || !strings.HasPrefix(a.ResponseID, "http-") {
		t.Fatalf("POST: %d %+v", code, a)
	}
	var o Outcomes
	do(t, "GET", in.url+a.Outcomes+"?wait=50s&calls=1", as("", nil), nil, &o)
	rs := results(t, o)
	if len(rs) != 1 || rs[0].Tool != "get_weather" || rs[0].Status != "executed" {
		t.Fatalf("outcomes %+v", o)
	}
}

func TestIngest_a_response_without_calls_is_complete_with_its_response_outcome(t *testing.T) {
	in := startIngest(t, nil, nil, nil)
	body := []byte(`{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}]}`)
	var a Accepted
	if code := do(t, "POST", in.url+RouteResponses, as("", map[string]string{"Toolgate-Provider": "openai-chat"}), body, &a); code != http.StatusAccepted {
		t.Fatalf("POST: %d", code)
	}
	var o Outcomes
	do(t, "GET", in.url+a.Outcomes+"?wait=50s", as("", nil), nil, &o)
	if !o.Complete || o.Calls != 0 || len(o.Outcomes) != 1 || !strings.Contains(string(o.Outcomes[0]), `"no_tool_calls"`) {
		t.Fatalf("outcomes %+v %s", o, o.Outcomes)
	}
}

// A tenant's batch request is published on the tenant's batch subject
// (toolgate.in.t.<tenant>.batch), which accumulate's lanes read apart from
// its interactive responses, by the tenant's producer user as rendered (it
// may publish there), and runs to its outcome; an interactive one goes on
// the tenant's claimed subject of its id, in TOOLGATE_RESPONSES. The same
// id again with other content is refused at publish: 409, nothing stored;
// with the same content it is a duplicate: 200.
func TestIngest_a_batch_request_goes_on_its_tenants_batch_subject(t *testing.T) {
	in := startIngest(t, nil, []string{"acme"}, nil)
	for _, c := range []struct{ rid, prio, subject, stream string }{
		{"acme-batch-1", "batch", streams.InTenantBatch("acme"), streams.StreamIn},
		{"acme-inter-1", "interactive", streams.InTenantClaimed("acme", "acme-inter-1"), streams.StreamResponses},
	} {
		var a Accepted
		if code := do(t, "POST", in.url+RouteResponses, as("acme", map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Response-Id": c.rid, "Toolgate-Priority": c.prio}),
			example(t, "valid-invoice.json"), &a); code != http.StatusAccepted {
			t.Fatalf("POST %s: %d %+v", c.rid, code, a)
		}
		var o Outcomes
		do(t, "GET", in.url+a.Outcomes+"?wait=50s&calls=1", as("acme", nil), nil, &o)
		if rs := results(t, o); len(rs) != 1 || rs[0].Status != "executed" {
			t.Fatalf("%s: outcomes %+v", c.rid, o)
		}
		_, js := in.pipe.Connect(t, authz.Admin)
		st, err := js.Stream(context.Background(), c.stream)
		if err != nil {
			t.Fatal(err)
		}
		m, err := st.GetLastMsgForSubject(context.Background(), c.subject)
		if err != nil || m.Header.Get(streams.HeaderResponseID) != c.rid {
			t.Fatalf("%s: last on %s: %v %v", c.rid, c.subject, m, err)
		}
	}
	hdr := as("acme", map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Response-Id": "acme-inter-1"})
	var p problem
	if code := do(t, "POST", in.url+RouteResponses, hdr, []byte(`{"id":"other","choices":[]}`), &p); code != http.StatusConflict || p.Code != CodeConflict {
		t.Fatalf("other content under a used id: %d %+v, want 409 %s", code, p, CodeConflict)
	}
	var a Accepted
	if code := do(t, "POST", in.url+RouteResponses, hdr, example(t, "valid-invoice.json"), &a); code != http.StatusOK || !a.Duplicate {
		t.Fatalf("the same content again: %d %+v, want 200 duplicate", code, a)
	}
}
