package httpingest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/httpingest/pipetest"
)

// Issue 17 point 1: the HTTP ingest, connected as the producer user only,
// lists a call that waits for a human approval in GET outcomes (waiting:
// call id, for, until its expiry), from the notice the real policy stage
// publishes on the response's progress subject. Before, the answer said
// only that the response was not complete, as for a stopped pipeline.
func TestIngest_a_call_waiting_for_approval_is_listed_with_its_expiry(t *testing.T) {
	// Roles count only from a verified token (issue 28): the admin's call
	// waits for a human only when its token says admin.
	is := pipetest.NewIssuer(t)
	in := startIngest(t, is, []string{"acme"}, nil)
	tok := is.Token("acme", "alice", "admin")
	var a Accepted
	before := time.Now()
	if code := do(t, "POST", in.url+RouteResponses, map[string]string{"Toolgate-Provider": "openai-chat", "Toolgate-Response-Id": "http-wait-1", "Toolgate-Token": tok},
		example(t, "delete-account.json"), &a); code != http.StatusAccepted {
		t.Fatalf("POST: %d %+v", code, a)
	}
	var o Outcomes
	deadline := time.Now().Add(60 * time.Second)
	for len(o.Waiting) == 0 && time.Now().Before(deadline) {
		if code := do(t, "GET", in.url+a.Outcomes+"?wait=1s", map[string]string{"Toolgate-Token": tok}, nil, &o); code != http.StatusOK {
			t.Fatalf("GET: %d", code)
		}
	}
	if o.Complete || o.Calls != 0 || len(o.Waiting) != 1 {
		t.Fatalf("outcomes %+v", o)
	}
	w := o.Waiting[0]
	if w.CallID != "acme=http-wait-1-0" || w.For != "approval" || w.Tool != "delete_customer_account" ||
		w.Until.Before(before.Add(14*time.Minute)) || w.Until.After(time.Now().Add(16*time.Minute)) {
		t.Errorf("waiting %+v", w)
	}
	if strings.Contains(w.CallID+w.Tool+w.For, "cus_9821") {
		t.Error("the notice carries arguments")
	}
}

// The cache keeps a notice only for a call of its own response without an
// outcome, drops it when the outcome comes, and ignores stream progress and
// anything that is not a waiting notice.
func TestCache_waiting_notices_end_with_the_outcome(t *testing.T) {
	c := newCache(time.Minute, 1<<20, 10, 4)
	res, prog := "toolgate.results._.r1", "toolgate.progress._.r1"
	for _, data := range []string{
		`{"response_id":"r1","seq":3,"calls":[]}`,                 // stream progress
		`{"kind":"waiting","call_id":"other-0","for":"approval"}`, // not a call of r1
		`{"kind":"waiting","call_id":"r1-1"}`,                     // for nothing
		`{"kind":"later","call_id":"r1-1","for":"approval"}`,      // a kind unknown
		`not json`,
	} {
		c.addNotice(prog, []byte(data))
	}
	if v := c.peek(res); len(v.Waiting) != 0 {
		t.Fatalf("kept %+v", v.Waiting)
	}
	c.addNotice(prog, []byte(`{"kind":"waiting","call_id":"r1-1","tool":"t","for":"approval","until":"2030-01-01T00:00:00Z"}`))
	c.addNotice(prog, []byte(`{"kind":"waiting","call_id":"r1-0","tool":"t","for":"approval"}`))
	if v := c.peek(res); len(v.Waiting) != 2 || v.Waiting[0].CallID != "r1-0" || v.Waiting[1].Until.Year() != 2030 {
		t.Fatalf("waiting %+v", v.Waiting)
	}
	c.add(res, []byte(`{"call_id":"r1-1","response_calls":2}`))
	c.addNotice(prog, []byte(`{"kind":"waiting","call_id":"r1-1","tool":"t","for":"approval"}`)) // late: its outcome is in
	if v := c.peek(res); len(v.Waiting) != 1 || v.Waiting[0].CallID != "r1-0" || v.Calls != 1 {
		t.Fatalf("after the outcome: %+v", v)
	}
	if c.bytes != len(`{"call_id":"r1-1","response_calls":2}`)+waitBytes(Waiting{CallID: "r1-0", Tool: "t", For: "approval"}) {
		t.Errorf("bytes %d", c.bytes)
	}
}
