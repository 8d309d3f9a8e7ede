package gates

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/model"
	"github.com/toolgate/toolgate/internal/model/modelclient"
	"github.com/toolgate/toolgate/internal/model/modeltest"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/worker"
)

var repairT0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

const repairToolsYAML = `
tools:
  - name: create_invoice
    description: Creates a draft invoice.
    input_schema:
      type: object
      properties:
        customer_id: {type: string}
        amount_cents: {type: integer}
      required: [customer_id, amount_cents]
    repair: {max_attempts: 2}
  - name: get_weather
    description: Current weather for a city.
    input_schema:
      type: object
      properties: {city: {type: string}}
      required: [city]
    repair: {allow_text: true}
  - name: delete_customer_account
    description: Deletes an account.
    input_schema: {type: object}
    repair: {max_attempts: 0}
`

// repairTools is a fixed registry for the repair gate's tests.
type repairTools map[string]*tool.Compiled

func (m repairTools) Lookup(n string) (*tool.Compiled, bool) { t, ok := m[n]; return t, ok }

func (m repairTools) Names() []string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func newRepairTools(t *testing.T) repairTools {
	t.Helper()
	defs, err := tool.Load("tools.yaml", []byte(repairToolsYAML))
	if err != nil {
		t.Fatal(err)
	}
	m := repairTools{}
	for i, d := range defs {
		c, err := tool.Compile(d, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		m[d.Name] = c
	}
	return m
}

// newRepairGate is the gate against a scripted model server.
func newRepairGate(t *testing.T, srv *modeltest.Server, adjust func(*model.Config)) *Repair {
	t.Helper()
	cfg := srv.Config()
	if adjust != nil {
		adjust(&cfg)
	}
	c, err := modelclient.NewClient(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Repair{Tools: newRepairTools(t), Now: func() time.Time { return repairT0 }, Model: c}
}

// failedCall is a call an earlier gate left in status with errs.
func failedCall(status call.Status, toolName, raw string, errs ...string) call.Envelope {
	e := call.New("resp-r", 0, repairT0)
	e.Provider, e.ProviderCallID, e.ToolName, e.RawArguments = "openai-chat", "call_orig", toolName, raw
	if status == call.SchemaInvalid || status == call.NoSuchTool {
		e.Arguments, e.ToolRevision = json.RawMessage(raw), 7
	}
	e.Status, e.Errors = status, errs
	return e
}

func handleOne(t *testing.T, g *Repair, e call.Envelope) call.Envelope {
	t.Helper()
	out, err := g.Handle(context.Background(), e)
	if err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if len(out) != 1 {
		t.Fatalf("Handle returned %d envelopes, want 1", len(out))
	}
	return out[0]
}

func TestRepair_no_endpoint_fails_with_the_class_and_calls_nothing(t *testing.T) {
	g := &Repair{Tools: newRepairTools(t), Now: func() time.Time { return repairT0 }}
	e := handleOne(t, g, failedCall(call.SchemaInvalid, "create_invoice", `{}`, "/customer_id: required"))
	if e.Status != call.Failed || e.Failure != call.SchemaInvalid || len(e.Repairs) != 0 || e.Errors[0] != "/customer_id: required" {
		t.Fatalf("got %s/%s errors %v repairs %v; want failed/schema_invalid with the errors kept", e.Status, e.Failure, e.Errors, e.Repairs)
	}
}

func TestRepair_schema_invalid_repaired_reenters_parse_for_each_protocol(t *testing.T) {
	for _, p := range []model.Protocol{model.ProtocolOpenAIChat, model.ProtocolAnthropic} {
		t.Run(string(p), func(t *testing.T) {
			fixed := `{"amount_cents":500,"customer_id":"cus_1"}`
			srv := modeltest.New(t, p, modeltest.ToolCall(p, "create_invoice", fixed))
			g := newRepairGate(t, srv, nil)
			in := failedCall(call.SchemaInvalid, "create_invoice", `{"customer_id":"cus_1"}`, "/amount_cents: required")
			e := handleOne(t, g, in)
			if e.Status != call.Received || e.RepairAttempts != 1 || e.ToolName != "create_invoice" || e.RawArguments != fixed {
				t.Fatalf("got %s attempts %d %s %s; want received, attempt 1, the repaired arguments", e.Status, e.RepairAttempts, e.ToolName, e.RawArguments)
			}
			if e.Arguments != nil || e.ToolRevision != 0 || e.Errors != nil || e.CallID != in.CallID || e.ProviderCallID != "call_orig" {
				t.Fatalf("re-entered call keeps stale judgement or lost its identity: %+v", e)
			}
			want := call.Repair{Attempt: 1, Failure: call.SchemaInvalid, RawArguments: `{"customer_id":"cus_1"}`, Answer: fixed}
			if len(e.Repairs) != 1 || e.Repairs[0].Attempt != want.Attempt || e.Repairs[0].Failure != want.Failure ||
				e.Repairs[0].RawArguments != want.RawArguments || e.Repairs[0].Answer != want.Answer || e.Repairs[0].Errors[0] != "/amount_cents: required" {
				t.Fatalf("repairs %+v, want %+v with the errors", e.Repairs, want)
			}
			last := e.History[len(e.History)-2:]
			if last[0].Status != call.Repairing || last[1].Status != call.Received || !strings.Contains(last[1].Note, "repaired by model (attempt 1)") {
				t.Fatalf("history tail %+v, want repairing then received with the repair noted", last)
			}
			if srv.Requests() != 1 {
				t.Fatalf("%d model requests, want 1", srv.Requests())
			}
			body := string(srv.Bodies()[0])
			for _, s := range []string{"/amount_cents: required", `customer_id`, "Do not invent missing information", "create_invoice"} {
				if !strings.Contains(body, s) {
					t.Errorf("request lacks %q: %s", s, body)
				}
			}
		})
	}
}

func TestRepair_bound_reached_fails_without_a_request(t *testing.T) {
	p := model.ProtocolOpenAIChat
	srv := modeltest.New(t, p, modeltest.ToolCall(p, "get_weather", `{"city":"Oslo"}`))
	g := newRepairGate(t, srv, nil)
	for _, tc := range []struct {
		name     string
		tool     string
		attempts int
	}{
		{"default bound of one used", "get_weather", 1},
		{"tool bound of two used", "create_invoice", 2},
		{"repair disabled for the tool", "delete_customer_account", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := failedCall(call.SchemaInvalid, tc.tool, `{"x":1}`, "/x: not allowed")
			in.RepairAttempts = tc.attempts
			e := handleOne(t, g, in)
			if e.Status != call.Failed || e.Failure != call.SchemaInvalid || e.Errors[0] != "/x: not allowed" {
				t.Fatalf("got %s/%s %v; want failed/schema_invalid with the last errors", e.Status, e.Failure, e.Errors)
			}
		})
	}
	if srv.Requests() != 0 {
		t.Fatalf("%d model requests, want none once the bound is reached", srv.Requests())
	}
}

func TestRepair_text_saying_information_is_missing_needs_clarification(t *testing.T) {
	p := model.ProtocolAnthropic
	srv := modeltest.New(t, p, modeltest.Text(p, "The customer_id is missing; I cannot create the invoice without it."))
	g := newRepairGate(t, srv, nil)
	e := handleOne(t, g, failedCall(call.SchemaInvalid, "create_invoice", `{"amount_cents":5}`, "/customer_id: required"))
	if e.Status != call.NeedsClarification || len(e.Errors) != 1 || !strings.Contains(e.Errors[0], "customer_id is missing") {
		t.Fatalf("got %s %v; want needs_clarification with the model's text", e.Status, e.Errors)
	}
	if e.RepairAttempts != 1 || len(e.Repairs) != 1 || !strings.Contains(e.Repairs[0].Answer, "missing") || srv.Requests() != 1 {
		t.Fatalf("attempts %d repairs %+v requests %d; want one recorded attempt", e.RepairAttempts, e.Repairs, srv.Requests())
	}
}

func TestRepair_unusable_answers_fail_with_the_reason(t *testing.T) {
	p := model.ProtocolOpenAIChat
	two := modeltest.Reply{Body: `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","tool_calls":[` +
		`{"id":"a","type":"function","function":{"name":"get_weather","arguments":"{}"}},` +
		`{"id":"b","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`}
	for _, tc := range []struct {
		name  string
		reply modeltest.Reply
		why   string
	}{
		{"two calls", two, "2 tool calls"},
		{"chatter", modeltest.Text(p, "Sure, here it is."), "did not say what is missing"},
		{"not a response", modeltest.Reply{Body: `[1,2]`}, "not a openai-chat response"},
		{"bad request is permanent", modeltest.Status(p, 400, ""), "refused the request: model: openai-chat: HTTP 400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.New(t, p, tc.reply)
			g := newRepairGate(t, srv, nil)
			e := handleOne(t, g, failedCall(call.SchemaInvalid, "get_weather", `{}`, "/city: required"))
			if e.Status != call.Failed || e.Failure != call.SchemaInvalid || !strings.Contains(strings.Join(e.Errors, "|"), tc.why) {
				t.Fatalf("got %s/%s %v; want failed/schema_invalid with %q", e.Status, e.Failure, e.Errors, tc.why)
			}
			if e.Errors[0] != "/city: required" || srv.Requests() != 1 || len(e.Repairs) != 1 {
				t.Fatalf("errors %v requests %d repairs %d; want the original errors first, 1 request, 1 recorded attempt", e.Errors, srv.Requests(), len(e.Repairs))
			}
		})
	}
}

func TestRepair_retryable_model_failure_is_transient_with_retry_after(t *testing.T) {
	p := model.ProtocolOpenAIChat
	srv := modeltest.New(t, p, modeltest.Status(p, 429, "7"))
	g := newRepairGate(t, srv, nil) // MaxBackoff 50ms: a 7s Retry-After is handed back, not waited for
	in := failedCall(call.SchemaInvalid, "get_weather", `{}`, "/city: required")
	out, err := g.Handle(context.Background(), in)
	var we *worker.Error
	if !errors.As(err, &we) || we.Permanent || we.Code != codeModelUnavailable || we.Delay != 7*time.Second || out != nil {
		t.Fatalf("Handle = %v, %v; want a transient %s error with a 7s delay and no output", out, err, codeModelUnavailable)
	}
	if srv.Requests() != 1 {
		t.Fatalf("%d requests, want 1", srv.Requests())
	}
}

func TestRepair_model_that_hangs_past_the_budget_is_transient(t *testing.T) {
	p := model.ProtocolAnthropic
	srv := modeltest.New(t, p, modeltest.Hang())
	g := newRepairGate(t, srv, func(c *model.Config) { c.MaxRetries = 5 })
	g.Budget = 100 * time.Millisecond
	_, err := g.Handle(context.Background(), failedCall(call.SchemaInvalid, "get_weather", `{}`, "/city: required"))
	var we *worker.Error
	if !errors.As(err, &we) || we.Permanent || we.Code != codeRepairBudget {
		t.Fatalf("err %v; want a transient %s error", err, codeRepairBudget)
	}
	if n := srv.Requests(); n != 1 {
		t.Fatalf("%d requests within the budget, want 1 (the first never answered)", n)
	}
}

func TestRepair_no_such_tool_offers_the_closest_tool_and_lists_valid_names(t *testing.T) {
	p := model.ProtocolOpenAIChat
	srv := modeltest.New(t, p, modeltest.ToolCall(p, "get_weather", `{"city":"Oslo"}`))
	g := newRepairGate(t, srv, nil)
	in := failedCall(call.NoSuchTool, "getWeather", `{"city":"Oslo"}`, `there is no tool named "getWeather"`)
	in.ValidTools = g.Tools.Names()
	e := handleOne(t, g, in)
	if e.Status != call.Received || e.ToolName != "get_weather" || e.ValidTools != nil {
		t.Fatalf("got %s %s valid %v; want received as get_weather with the valid names cleared", e.Status, e.ToolName, e.ValidTools)
	}
	if note := e.History[len(e.History)-1].Note; !strings.Contains(note, `tool changed from "getWeather" to "get_weather"`) {
		t.Fatalf("note %q does not name the changed tool", note)
	}
	var req struct {
		Messages []struct{ Content string }
		Tools    []struct{ Function struct{ Name string } }
	}
	if err := json.Unmarshal(srv.Bodies()[0], &req); err != nil {
		t.Fatal(err)
	}
	if req.Tools[0].Function.Name != "get_weather" || !strings.Contains(req.Messages[1].Content, "create_invoice, delete_customer_account, get_weather") {
		t.Fatalf("offered %q, prompt %q; want get_weather offered and every valid name listed", req.Tools[0].Function.Name, req.Messages[1].Content)
	}
}

func TestRepair_parse_failure_of_an_unknown_tool_is_repaired_as_no_such_tool(t *testing.T) {
	p := model.ProtocolOpenAIChat
	srv := modeltest.New(t, p, modeltest.ToolCall(p, "create_invoice", `{"customer_id":"c","amount_cents":1}`))
	g := newRepairGate(t, srv, nil)
	e := handleOne(t, g, failedCall(call.InvalidJSON, "create_invoce", `{"customer_id":"c",`, "parse: invalid_json"))
	if e.Status != call.Received || e.ToolName != "create_invoice" {
		t.Fatalf("got %s %s; want received as create_invoice", e.Status, e.ToolName)
	}
	if body := string(srv.Bodies()[0]); !strings.Contains(body, `there is no tool named \"create_invoce\"`) || !strings.Contains(body, "parse: invalid_json") {
		t.Fatalf("prompt lacks the unknown name or the parse error: %s", body)
	}
}

func TestRepair_truncated_answer_is_marked_so_parse_judges_it_truncated(t *testing.T) {
	p := model.ProtocolOpenAIChat
	cut := `{"customer_id":"c","amount_cents":`
	srv := modeltest.New(t, p, modeltest.Truncated(p, "create_invoice", cut))
	g := newRepairGate(t, srv, nil)
	e := handleOne(t, g, failedCall(call.Truncated, "create_invoice", `{"customer_id":"c","amo`, "parse: truncated"))
	if e.Status != call.Received || e.RawArguments != cut || e.TruncatedHint == "" || e.FinishReason != "length" {
		t.Fatalf("got %s %q hint %q finish %q; want received with the cut arguments, a truncation hint and finish length", e.Status, e.RawArguments, e.TruncatedHint, e.FinishReason)
	}
	if body := string(srv.Bodies()[0]); !strings.Contains(body, "Send a smaller payload") {
		t.Fatalf("truncated repair request does not ask for a smaller payload: %s", body)
	}
}

func TestRepair_allow_text_offers_the_tool_without_forcing_it(t *testing.T) {
	for _, p := range []model.Protocol{model.ProtocolOpenAIChat, model.ProtocolAnthropic} {
		t.Run(string(p), func(t *testing.T) {
			srv := modeltest.New(t, p,
				modeltest.Text(p, "The city is missing; please provide it."),
				modeltest.ToolCall(p, "create_invoice", `{"customer_id":"c","amount_cents":1}`))
			g := newRepairGate(t, srv, nil)
			// get_weather sets repair.allow_text: automatic tool choice, and a
			// text answer saying what is missing ends needs_clarification.
			e := handleOne(t, g, failedCall(call.SchemaInvalid, "get_weather", `{}`, "city: required"))
			if e.Status != call.NeedsClarification {
				t.Fatalf("status %s, want needs_clarification", e.Status)
			}
			// create_invoice does not: its request forces the tool.
			handleOne(t, g, failedCall(call.SchemaInvalid, "create_invoice", `{"customer_id":"c"}`, "amount_cents: required"))
			bodies := srv.Bodies()
			var first, second struct {
				ToolChoice any `json:"tool_choice"`
			}
			_ = json.Unmarshal(bodies[0], &first)
			_ = json.Unmarshal(bodies[1], &second)
			if forced(first.ToolChoice) || !forced(second.ToolChoice) {
				t.Fatalf("tool_choice %v then %v: want automatic for allow_text, forced otherwise", first.ToolChoice, second.ToolChoice)
			}
		})
	}
}

// forced reports whether a request's tool_choice names one tool.
func forced(choice any) bool {
	m, ok := choice.(map[string]any)
	if !ok {
		return false
	}
	_, fn := m["function"]
	_, name := m["name"]
	return fn || name
}
