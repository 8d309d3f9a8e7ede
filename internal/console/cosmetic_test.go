package console

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/streams"
)

// waitingNoTenant stores a call waiting at policy for approval whose caller
// has no tenant; its status record says what it waits for, or, executed,
// that it was approved and ran.
func (r *rig) waitingNoTenant(id string, executed bool) {
	r.t.Helper()
	ctx := context.Background()
	now := time.Now()
	e := call.New(strings.TrimSuffix(id, "-0"), 0, now.Add(-time.Second))
	e.ToolName, e.RawArguments, e.Arguments, e.Provider = "delete_customer_account", `{"customer_id":"c1"}`, json.RawMessage(`{"customer_id":"c1"}`), "openai"
	e.Request = call.Request{Principal: "ops-1", Roles: []string{"admin"}}
	e.History = append(e.History, call.Step{Stage: streams.Policy, Status: call.ApprovalRequired, At: now})
	e.Status = call.ApprovalRequired
	e.Seals = []call.Seal{{Stage: streams.Business, Status: call.BusinessValid, Call: e.CallID, Tool: e.ToolName, Key: "k1", MAC: "m"}}
	rec, err := approval.NewRecord(e, "irreversible tool", time.Hour, now)
	if err != nil {
		r.t.Fatal(err)
	}
	kv, err := r.js.KeyValue(ctx, streams.BucketApprovals)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := approval.NewStore(kv).Create(ctx, rec); err != nil {
		r.t.Fatal(err)
	}
	st := pipeline.StatusOf(e)
	st.Waiting = &pipeline.Wait{Stage: streams.Policy, For: "approval", Detail: "a human decides", Since: now, Until: now.Add(time.Hour)}
	if executed {
		e.History = append(e.History,
			call.Step{Stage: streams.Policy, Status: call.Approved, At: now.Add(time.Millisecond)},
			call.Step{Stage: streams.Execute, Status: call.Executed, At: now.Add(2 * time.Millisecond), Note: "seals checked: policy k1"})
		e.Status = call.Executed
		st = pipeline.StatusOf(e)
	}
	r.putStatus(st)
}

func TestCosmetics_a_caller_without_tenant_reads_no_tenant(t *testing.T) {
	r := newRig(t, nil, nil)
	r.waitingNoTenant("rnotenant-0", false)
	for _, path := range []string{Prefix + "approvals", Prefix + "calls/rnotenant-0"} {
		_, body := r.get(path)
		if !strings.Contains(body, "no tenant") || strings.Contains(body, "tenant -") {
			t.Errorf("GET %s: want \"no tenant\" and no \"tenant -\":\n%s", path, body)
		}
	}
}

var waitingRe = regexp.MustCompile(`<p class="([^"]*)" data-testid="waiting">`)

func TestCosmetics_a_call_waiting_for_approval_is_not_shown_as_an_error(t *testing.T) {
	r := newRig(t, nil, nil)
	r.waitingNoTenant("rwaitstyle-0", false)
	_, body := r.get(Prefix + "calls/rwaitstyle-0")
	m := waitingRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no waiting notice on the call page:\n%s", body)
	}
	if strings.Contains(" "+m[1]+" ", " error ") || !strings.Contains(" "+m[1]+" ", " wait ") {
		t.Fatalf("the waiting notice has class %q, want the neutral \"wait\" style, not \"error\"", m[1])
	}
}

func TestCosmetics_the_login_page_shows_no_nav_to_a_visitor(t *testing.T) {
	r := newRig(t, map[string]Role{"viewer-token-0123456789": Viewer}, nil)
	_, body := r.get(Prefix + "login")
	if !strings.Contains(body, `form id="login"`) {
		t.Fatalf("no login form:\n%s", body)
	}
	if strings.Contains(body, "<nav>") || strings.Contains(body, `href="/console/approvals"`) {
		t.Fatalf("the logged-out login page shows the nav links:\n%s", body)
	}
	r.login("viewer-token-0123456789")
	if _, body := r.get(Prefix + "calls"); !strings.Contains(body, `href="/console/approvals"`) {
		t.Fatalf("a logged-in viewer has no nav:\n%s", body)
	}
}

func TestCosmetics_a_dead_letter_shows_its_raw_arguments_decoded_and_redacted(t *testing.T) {
	r := newRig(t, nil, nil)
	seq := r.deadLetter("rdecoded-0", "create_invoice", `{"amount":0,"password":"hunter2"}`)
	_, body := r.get(Prefix + "dlq/" + itoa(seq))
	if strings.Contains(body, "hunter2") {
		t.Fatalf("a secret reached the dead letter's page:\n%s", body)
	}
	if strings.Contains(body, `\&#34;amount\&#34;`) || strings.Contains(body, `\"amount\"`) {
		t.Fatalf("the raw arguments are shown as an escaped string:\n%s", body)
	}
	if !strings.Contains(body, "  &#34;amount&#34;: 0") || !strings.Contains(body, `data-testid="parsed-args"`) {
		t.Fatalf("want the raw arguments indented and the parsed beside them:\n%s", body)
	}
}

func TestCosmetics_an_approved_calls_seals_say_they_are_as_of_the_wait(t *testing.T) {
	r := newRig(t, nil, nil)
	r.waitingNoTenant("rsealwait-0", true)
	_, body := r.get(Prefix + "calls/rsealwait-0")
	if !strings.Contains(body, `data-testid="seals-checked"`) || !strings.Contains(body, "as the call stood while it waited for approval") {
		t.Fatalf("the seals of an approved call do not say they predate policy's seal:\n%s", body)
	}
	r.waitingNoTenant("rsealnow-0", false)
	if _, body := r.get(Prefix + "calls/rsealnow-0"); strings.Contains(body, "as the call stood while it waited") {
		t.Fatalf("a call still waiting says its seals are as of a past wait:\n%s", body)
	}
}
