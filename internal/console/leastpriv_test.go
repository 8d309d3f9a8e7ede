package console

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// TestLeastPrivilege_the_console_user_may_do_what_the_pages_do runs every
// page and action as authz.Console on a server with authz's permissions: a
// grant missing shows as an error on the page or a refused action.
func TestLeastPrivilege_the_console_user_may_do_what_the_pages_do(t *testing.T) {
	r := newRigAs(t, nil, nil, true)
	rec := r.waiting("rlp-0", "delete_customer_account", `{"customer_id":"c1"}`)
	seq := r.deadLetter("rlpd-0", "create_invoice", `{"amount":0}`)
	purge := r.deadLetter("rlpp-0", "create_invoice", `{"amount":0}`)
	r.tool(`{"name":"create_invoice","input_schema":{"type":"object"},"policy":{"risk":"write"}}`)

	ov := r.srv.ov.get(context.Background())
	if len(ov.Errors) > 0 {
		t.Fatalf("overview errors: %v", ov.Errors)
	}
	for _, st := range ov.Stages {
		if !st.Known {
			t.Errorf("stage %s: consumer unreadable: %s", st.Name, st.Err)
		}
	}
	if ov.DeadTotal != 2 || ov.Approvals != 1 {
		t.Errorf("overview: %d letters, %d approvals; want 2, 1", ov.DeadTotal, ov.Approvals)
	}
	for path, want := range map[string]string{
		Prefix + "calls?tenant=acme":         "No calls match", // the tenant has no results yet
		Prefix + "calls?tool=create_invoice": `data-call-id="rlpd-0"`,
		Prefix + "calls/rlpd-0":              `data-testid="repair"`,
		Prefix + "calls/rlp-0":               `data-testid="approval"`,
		Prefix + "dlq/" + itoa(seq):          `data-testid="evidence"`,
		Prefix + "tools/create_invoice":      `data-revision="1"`,
	} {
		code, body := r.get(path)
		if code != 200 || !strings.Contains(body, want) || strings.Contains(body, `class="flash error"`) {
			t.Errorf("GET %s: %d, want %s and no error:\n%s", path, code, want, body)
		}
	}
	csrf := r.csrf(Prefix + "approvals")
	if code, body := r.post(Prefix+"approvals/rlp-0/approve", url.Values{"csrf": {csrf}, "hash": {rec.ArgsHash}}); code != 200 || !strings.Contains(body, "approved by "+rigName) || strings.Contains(body, "could not be sent") {
		t.Fatalf("approve: %d\n%s", code, body)
	}
	if got := r.approvalRecord("rlp-0"); got.State != approval.Approved || !got.Resumed {
		t.Fatalf("record %+v, want approved and resumed", got)
	}
	code, body := r.post(Prefix+"dlq/replay", url.Values{"csrf": {csrf}, "seq": {itoa(seq)}, "mode": {"selected"}})
	if code != 200 {
		t.Fatalf("replay: %d\n%s", code, body)
	}
	page := lastURL(t, r, body)
	testenv.Eventually(t, 20*time.Second, 50*time.Millisecond, func() error {
		if _, body = r.get(strings.TrimPrefix(page, r.ts.URL)); !strings.Contains(body, `data-testid="replay-summary"`) {
			return errNot("summary")
		}
		return nil
	})
	if strings.Contains(body, "stopped:") || strings.Contains(body, "Permissions Violation") {
		t.Fatalf("replay as the console user:\n%s", body)
	}
	if code, body := r.post(Prefix+"dlq/purge/confirm", url.Values{"csrf": {csrf}, "seq": {itoa(purge)}, "mode": {"selected"}, "all": {"1"}}); code != 200 || !strings.Contains(body, "purged 1 dead letter") {
		t.Fatalf("purge: %d\n%s", code, body)
	}
}

// A call in flight has no status record (issue 30): the console user reads
// its hop, and the calls page and the call's page show it.
func TestLeastPrivilege_a_call_in_flight_is_shown_from_its_hop(t *testing.T) {
	r := newRigAs(t, nil, nil, true)
	e := call.New("rif", 0, time.Now())
	e.ToolName, e.RawArguments = "create_invoice", `{"amount":5}`
	outs, err := (&pipeline.Emitter{}).Outputs(streams.Accumulate, e)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if _, err := r.js.PublishMsg(context.Background(), &nats.Msg{Subject: o.Subject, Header: o.Header, Data: o.Data}); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		Prefix + "calls?tool=create_invoice": `data-call-id="rif-0"`,
		Prefix + "calls/rif-0":               "rif-0",
	} {
		code, body := r.get(path)
		if code != 200 || !strings.Contains(body, want) || strings.Contains(body, `class="flash error"`) {
			t.Errorf("GET %s: %d, want %s and no error:\n%s", path, code, want, body)
		}
	}
}

// A call that ended without ever waiting writes no status record (issue
// 30): the console user reads its result, and the calls page and the
// call's page show its final status and history from it.
func TestLeastPrivilege_a_call_that_wrote_no_record_is_shown_from_its_result(t *testing.T) {
	r := newRigAs(t, nil, nil, true)
	at := time.Now()
	e := call.New("rend", 0, at)
	e.ToolName, e.RawArguments, e.Provider = "create_invoice", `{"amount":5}`, "openai-chat"
	for _, m := range []struct {
		stage string
		to    call.Status
	}{{"parse", call.Parsed}, {"validate", call.Validated}, {"business", call.BusinessValid}, {"policy", call.DryRun}} {
		if err := e.Move(m.stage, m.to, at); err != nil {
			t.Fatal(err)
		}
	}
	outs, err := (&pipeline.Emitter{}).Outputs(streams.Policy, e)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Subject == streams.CallStatus(e.CallID) {
			t.Fatalf("a call that never waited wrote a status record")
		}
		if _, err := r.js.PublishMsg(context.Background(), &nats.Msg{Subject: o.Subject, Header: o.Header, Data: o.Data}); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		Prefix + "calls?tool=create_invoice": `data-call-id="rend-0"`,
		Prefix + "calls/rend-0":              "dry_run",
	} {
		code, body := r.get(path)
		if code != 200 || !strings.Contains(body, want) || strings.Contains(body, `class="flash error"`) {
			t.Errorf("GET %s: %d, want %s and no error:\n%s", path, code, want, body)
		}
	}
	if code, body := r.get(Prefix + "calls/rend-0"); code != 200 || !strings.Contains(body, "business_valid") {
		t.Errorf("the call's page lacks its history:\n%s", body)
	}
}
