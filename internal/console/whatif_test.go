package console

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/streams"
)

// Where a seeded call's audit event is: in its result (issue 30), on the
// audit stream only (a call of before the upgrade), or both
// (--audit-stream).
const (
	inResult = 1 << iota
	onStream
)

// seedAuditedCall records an executed get_weather call as the pipeline
// does: its status record and its audit event where says, as the admin.
func (r *rig) seedAuditedCall(id, args string, where int) {
	r.t.Helper()
	ctx := context.Background()
	e := call.New("rwi", 0, time.Now())
	e.CallID, e.ToolName, e.RawArguments, e.Arguments, e.Provider = id, "get_weather", args, []byte(args), "openai-chat"
	for _, s := range []call.Status{call.Parsed, call.Validated, call.BusinessValid, call.Approved, call.Executed} {
		if err := e.Move("test", s, time.Now()); err != nil {
			r.t.Fatal(err)
		}
	}
	calls, err := r.js.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		r.t.Fatal(err)
	}
	rec, _ := json.Marshal(pipeline.StatusOf(e))
	if _, err := calls.Put(ctx, id, rec); err != nil {
		r.t.Fatal(err)
	}
	audit := pipeline.AuditOf("execute", e, nil)
	publish := func(subject string, v any) {
		m := nats.NewMsg(subject)
		m.Header.Set(streams.HeaderCallID, id)
		m.Data, _ = json.Marshal(v)
		if _, err := r.js.PublishMsg(ctx, m); err != nil {
			r.t.Fatal(err)
		}
	}
	if where&inResult != 0 {
		res := (&pipeline.Emitter{}).ResultOf(e)
		res.Audit = &audit
		publish(streams.Results(e.Request.Tenant, e.ResponseID), res)
	}
	if where&onStream != 0 {
		publish(streams.Audit(string(e.Status)), audit)
	}
}

// TestWhatIf_a_viewer_runs_it_as_the_console_user: a viewer pastes a
// tighter definition on the tools page; the console (least privilege: no
// TOOLGATE_IN) shows which recorded call would now be refused, linked to
// its story, and changes nothing.
func TestWhatIf_a_viewer_runs_it_as_the_console_user(t *testing.T) {
	r := newRigAs(t, map[string]Role{viewerToken: Viewer}, map[string]string{viewerToken: "vera"}, true)
	r.session(viewerToken)
	r.seedAuditedCall("wi-1-0", `{"city":"Rio de Janeiro"}`, inResult)
	r.seedAuditedCall("wi-2-0", `{"city":"Oslo"}`, onStream)
	r.seedAuditedCall("wi-3-0", `{"city":"Bergen"}`, inResult|onStream)
	csrf := r.csrf(Prefix + "tools")
	def := `
tools:
  - name: get_weather
    input_schema: {type: object, properties: {city: {type: string, maxLength: 8}}, required: [city]}
    policy: {risk: read}
`
	code, body := r.post(Prefix+"tools/whatif", url.Values{"csrf": {csrf}, "definition": {def}, "since": {"1h"}})
	for _, want := range []string{"3 seen, 2 unchanged", "would go to repair: schema_invalid", `href="/console/calls/wi-1-0"`, "1 call(s) that passed every gate would now be refused"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Fatalf("POST whatif: %d, want %q:\n%s", code, want, body)
		}
	}
	tools, _ := r.js.KeyValue(context.Background(), streams.BucketTools)
	if _, err := tools.Get(context.Background(), "get_weather"); err == nil {
		t.Fatal("the what-if stored the definition")
	}
	// A bad definition: a clear error naming the field, 400.
	bad := strings.Replace(def, "policy: {risk: read}", "policy: {risk: read}\n    rules: [{expr: \"args.city ==\", message: x}]", 1)
	code, body = r.post(Prefix+"tools/whatif", url.Values{"csrf": {csrf}, "definition": {bad}})
	if code != 400 || !strings.Contains(body, "rules[0]") {
		t.Fatalf("bad definition: %d\n%s", code, body)
	}
	for _, since := range []string{"10000h", "-1h", "soon"} {
		if code, _ := r.post(Prefix+"tools/whatif", url.Values{"csrf": {csrf}, "definition": {def}, "since": {since}}); code != 400 {
			t.Fatalf("since %q: %d, want 400", since, code)
		}
	}
	if code, _ := r.post(Prefix+"tools/whatif", url.Values{"csrf": {csrf}, "definition": {strings.Repeat("#", maxWhatIfDef+1)}}); code != 400 {
		t.Fatalf("oversized definition: %d, want 400", code)
	}
	// Without the CSRF token: refused before anything runs.
	if code, _ := r.post(Prefix+"tools/whatif", url.Values{"definition": {def}}); code != 403 {
		t.Fatalf("without csrf: %d, want 403", code)
	}
}
