package stage

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/streams"
)

// toolCall is one call a model proposed.
type toolCall struct{ name, args string }

// chatCalls is an OpenAI Chat response proposing calls, ids call_<rid>_<i>.
func chatCalls(rid string, calls ...toolCall) []byte {
	var tcs []string
	for i, c := range calls {
		a, _ := json.Marshal(c.args)
		tcs = append(tcs, fmt.Sprintf(`{"id":"call_%s_%d","type":"function","function":{"name":%q,"arguments":%s}}`, rid, i, c.name, a))
	}
	return fmt.Appendf(nil, `{"id":%q,"object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[%s]},"finish_reason":"tool_calls"}]}`,
		rid, strings.Join(tcs, ","))
}

// anthropicCalls is an Anthropic Messages response proposing calls, ids
// toolu_<rid>_<i>.
func anthropicCalls(rid string, calls ...toolCall) []byte {
	var blocks []string
	for i, c := range calls {
		blocks = append(blocks, fmt.Sprintf(`{"type":"tool_use","id":"toolu_%s_%d","name":%q,"input":%s}`, rid, i, c.name, c.args))
	}
	return fmt.Appendf(nil, `{"id":%q,"type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[%s],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`,
		rid, strings.Join(blocks, ","))
}

const (
	weatherParis  = `{"city":"Paris"}`
	invoiceBadCur = `{"customer_id":"cus_9821","currency":"YEN","line_items":[{"sku":"PRO-SEAT","quantity":3,"price_cents":4900}]}`
	invoiceZero   = `{"customer_id":"cus_9821","currency":"USD","line_items":[{"sku":"PRO-SEAT","quantity":1,"price_cents":0}]}`
	deleteAccount = `{"customer_id":"cus_9821","reason":"asked to"}`
)

func TestPipeline_atomic_batch_with_one_invalid_call_runs_nothing(t *testing.T) {
	p := startPipeline(t)
	rid := "resp-atomic"
	p.publish(rid, "openai-chat", chatCalls(rid,
		toolCall{"get_weather", weatherParis}, toolCall{"create_invoice", validInvoice}, toolCall{"create_invoice", invoiceBadCur}),
		streams.HeaderAtomic, "true")
	rs := p.waitResults(rid, 3)
	byID := map[string]map[string]any{}
	for _, r := range rs {
		byID[r["call_id"].(string)] = r
	}
	for _, id := range []string{rid + "-0", rid + "-1"} {
		r := byID[id]
		if r["status"] != "batch_aborted" {
			t.Fatalf("%s ended %v (%v), want batch_aborted", id, r["status"], r["errors"])
		}
		if why := fmt.Sprint(r["errors"]); !strings.Contains(why, rid+"-2") || !strings.Contains(why, "schema_invalid") {
			t.Fatalf("%s: reason %s does not name the failed call %s-2 and its failure", id, why, rid)
		}
	}
	if r := byID[rid+"-2"]; r["status"] != "failed" || r["failure"] != "schema_invalid" {
		t.Fatalf("the invalid call ended %v/%v, want its own failure (failed/schema_invalid)", r["status"], r["failure"])
	}
	if n := p.executed.Load(); n != 0 {
		t.Fatalf("%d calls of an aborted atomic batch ran", n)
	}
	if len(p.results(rid)) != 3 {
		t.Fatalf("%d results, want exactly one per call", len(p.results(rid)))
	}
}

func TestPipeline_independent_calls_run_when_one_fails(t *testing.T) {
	p := startPipeline(t)
	rid := "resp-indep"
	p.publish(rid, "openai-chat", chatCalls(rid, toolCall{"get_weather", weatherParis}, toolCall{"create_invoice", invoiceBadCur}))
	rs := p.waitResults(rid, 2)
	for _, r := range rs {
		if r["call_id"] == rid+"-0" && r["status"] != "executed" {
			t.Fatalf("the valid call of a non-atomic response ended %v, want executed", r["status"])
		}
	}
	if p.executed.Load() != 1 {
		t.Fatalf("executed %d, want 1", p.executed.Load())
	}
}

// Every kind of terminal outcome reaches toolgate.results.<rid> with a
// tool-result message in the provider's own format.
func TestPipeline_every_outcome_comes_back_in_the_providers_format(t *testing.T) {
	p := startPipeline(t)
	cases := []struct {
		kind   string
		calls  []toolCall
		header []string
		status string
		ok     bool
		phrase string
	}{
		{"executed", []toolCall{{"get_weather", weatherParis}}, nil, "executed", true, `"done":"get_weather"`},
		{"failed", []toolCall{{"create_invoice", invoiceBadCur}}, nil, "failed", false, "failed validation"},
		{"rejected", []toolCall{{"delete_customer_account", deleteAccount}}, nil, "policy_rejected", false, "not permitted"},
		{"clarify", []toolCall{{"create_invoice", invoiceZero}}, nil, "business_invalid", false, "Ask the user"},
		{"aborted", []toolCall{{"get_weather", weatherParis}, {"create_invoice", invoiceBadCur}}, []string{streams.HeaderAtomic, "true"}, "batch_aborted", false, "none of the batch ran"},
	}
	for _, prov := range []string{"openai-chat", "anthropic"} {
		for _, c := range cases {
			t.Run(prov+"/"+c.kind, func(t *testing.T) {
				rid := "fmt-" + strings.ReplaceAll(prov, "-", "") + "-" + c.kind
				body := chatCalls(rid, c.calls...)
				if prov == "anthropic" {
					body = anthropicCalls(rid, c.calls...)
				}
				p.publish(rid, prov, body, c.header...)
				var r map[string]any
				for _, x := range p.waitResults(rid, len(c.calls)) {
					if x["call_id"] == rid+"-0" {
						r = x
					}
				}
				if r["status"] != c.status {
					t.Fatalf("status %v (%v), want %s", r["status"], r["errors"], c.status)
				}
				msg, _ := r["message"].(map[string]any)
				var content string
				switch prov {
				case "openai-chat":
					content, _ = msg["content"].(string)
					if msg["role"] != "tool" || msg["tool_call_id"] != "call_"+rid+"_0" {
						t.Fatalf("message %v, want an OpenAI role:tool message for call_%s_0", msg, rid)
					}
				case "anthropic":
					content, _ = msg["content"].(string)
					if msg["type"] != "tool_result" || msg["tool_use_id"] != "toolu_"+rid+"_0" || msg["is_error"] != !c.ok {
						t.Fatalf("message %v, want an Anthropic tool_result for toolu_%s_0 with is_error=%v", msg, rid, !c.ok)
					}
				}
				if !strings.Contains(content, c.phrase) {
					t.Fatalf("content %q does not say %q", content, c.phrase)
				}
				if !c.ok && !strings.HasPrefix(content, "Error:") {
					t.Fatalf("content %q of a failure does not start with Error:", content)
				}
			})
		}
	}
}
