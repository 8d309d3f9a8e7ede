package result

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

var failureStatuses = []string{
	"business_invalid", "needs_clarification", "policy_rejected", "approval_denied",
	"approval_expired", "approval_required", "execution_failed", "outcome_unknown",
	"batch_aborted", "transport_incomplete", "truncated", "invalid_json",
	"schema_invalid", "no_such_tool", "idempotency_conflict", "limit_exceeded", "some_future_status", "",
}

func TestText_every_failure_names_the_tool_and_says_error(t *testing.T) {
	for _, status := range failureStatuses {
		t.Run(status, func(t *testing.T) {
			got := Text(Outcome{Tool: "refund_payment", Status: status, Errors: []string{"reason one"}})
			if !strings.HasPrefix(got, "Error: ") {
				t.Errorf("text does not start with Error: %q", got)
			}
			if !strings.Contains(got, "refund_payment") {
				t.Errorf("text does not name the tool: %q", got)
			}
			if !strings.Contains(got, "- reason one") {
				t.Errorf("text does not list the errors: %q", got)
			}
		})
	}
}

func TestText_failure_texts_are_distinct(t *testing.T) {
	seen := map[string]string{}
	for _, status := range failureStatuses {
		got := Text(Outcome{Tool: "t", Status: status})
		if other, dup := seen[got]; dup && status != "" && other != "" {
			t.Errorf("%s and %s have the same text %q", status, other, got)
		}
		seen[got] = status
	}
}

func TestText_dry_run_and_no_result_name_the_tool(t *testing.T) {
	for _, o := range []Outcome{
		{Tool: "refund_payment", Status: "dry_run", OK: true},
		{Tool: "refund_payment", Status: "executed", OK: true},
		{Tool: "refund_payment", Status: "executed", OK: true, Result: json.RawMessage(" null ")},
	} {
		if got := Text(o); !strings.Contains(got, "refund_payment") || strings.HasPrefix(got, "Error") {
			t.Errorf("%+v: %q", o, got)
		}
	}
}

func TestText_specific_wording(t *testing.T) {
	for _, test := range []struct {
		name string
		o    Outcome
		want []string
	}{
		{"executed returns the compact result", Outcome{Tool: "t", Status: "executed", OK: true, Result: json.RawMessage("{ \"id\" : 7 }")},
			[]string{`{"id":7}`}},
		{"executed with non-JSON result returns it as text", Outcome{Tool: "t", Status: "executed", OK: true, Result: json.RawMessage("done")},
			[]string{"done"}},
		{"dry run previews and says nothing ran", Outcome{Tool: "t", Status: "dry_run", OK: true, Result: json.RawMessage(`{"would":"charge"}`)},
			[]string{"not executed (dry run)", `Preview: {"would":"charge"}`}},
		{"schema_invalid lists paths and asks to fix", Outcome{Tool: "create_invoice", Status: "schema_invalid", Errors: []string{"line_items: must have at least 1 item"}},
			[]string{"create_invoice was not executed", "failed validation", "- line_items: must have at least 1 item", "Fix these fields and call the tool again."}},
		{"truncated asks for a smaller payload", Outcome{Tool: "t", Status: "truncated"},
			[]string{"cut off", "token limit", "fewer items per call", "references (ids)"}},
		{"no_such_tool lists valid tools", Outcome{Tool: "send_mail", Status: "no_such_tool", ValidTools: []string{"send_email", "list_inbox"}},
			[]string{`no tool named "send_mail"`, "Valid tools: send_email, list_inbox."}},
		{"business_invalid forbids inventing values", Outcome{Tool: "t", Status: "business_invalid", Errors: []string{"customer_id is missing"}},
			[]string{"Do not invent values", "Ask the user", "- customer_id is missing"}},
		{"needs_clarification forbids inventing values", Outcome{Tool: "t", Status: "needs_clarification"},
			[]string{"Do not invent values", "Ask the user"}},
		{"policy_rejected forbids retry", Outcome{Tool: "t", Status: "policy_rejected", Errors: []string{"role viewer may not call t"}},
			[]string{"not permitted", "Do not retry", "- role viewer may not call t"}},
		{"approval_required says wait", Outcome{Tool: "t", Status: "approval_required"},
			[]string{"approval", "Do not call it again"}},
		{"approval_denied", Outcome{Tool: "t", Status: "approval_denied"}, []string{"denied", "Do not retry"}},
		{"approval_expired", Outcome{Tool: "t", Status: "approval_expired"}, []string{"in time", "ask the user"}},
		{"outcome_unknown forbids calling again", Outcome{Tool: "t", Status: "outcome_unknown"},
			[]string{"not known whether it ran", "Do not call it again", "reconciled"}},
		{"execution_failed carries the executor error", Outcome{Tool: "t", Status: "execution_failed", Errors: []string{"card declined"}},
			[]string{"failed while executing", "- card declined"}},
		{"executed but not OK is a failure", Outcome{Tool: "t", Status: "executed", Errors: []string{"boom"}},
			[]string{"Error: ", "failed while executing", "- boom"}},
		{"execution_failed without detail says so", Outcome{Tool: "t", Status: "execution_failed"},
			[]string{"no detail"}},
		{"batch_aborted says none ran", Outcome{Tool: "t", Status: "batch_aborted", Errors: []string{"call 2: schema_invalid"}},
			[]string{"none of the batch ran", "- call 2: schema_invalid"}},
		{"unknown status is named", Outcome{Tool: "t", Status: "weird"}, []string{"status weird", "not executed"}},
		{"missing tool name is stated", Outcome{Status: "schema_invalid"}, []string{"(unnamed tool)"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			got := Text(test.o)
			for _, w := range test.want {
				if !strings.Contains(got, w) {
					t.Errorf("text lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestText_long_error_lists_are_capped(t *testing.T) {
	var errs []string
	for i := range 50 {
		errs = append(errs, fmt.Sprintf("/items/%d: required", i))
	}
	errs = append(errs, "  ")
	got := Text(Outcome{Tool: "t", Status: "schema_invalid", Errors: errs})
	if n := strings.Count(got, "\n- /items/"); n != maxListedErrors {
		t.Fatalf("listed %d errors, want %d", n, maxListedErrors)
	}
	if !strings.Contains(got, "and 30 more") {
		t.Fatalf("text does not say how many were left out:\n%s", got)
	}
}
