package stage

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/model"
	"github.com/toolgate/toolgate/internal/model/modeltest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// startRepairPipeline is startPipeline with the repair endpoint pointing at
// a scripted model server and the given consumer settings.
func startRepairPipeline(t *testing.T, repair model.Config, settings streams.Settings) *pipe {
	return startRig(t, rig{
		serve:     []string{"create_invoice", "get_weather", "delete_customer_account"},
		configure: func(c *Config) { c.Settings, c.Repair = settings, repair },
	})
}

// A create_invoice call whose currency the schema refuses.
const badCurrencyInvoice = `{"customer_id":"cus_9821","currency":"YEN","line_items":[{"sku":"PRO-SEAT","quantity":3,"price_cents":4900}]}`

// deadLetter waits for the one dead letter on subject and decodes it.
func (p *pipe) deadLetter(subject string) call.Envelope {
	p.t.Helper()
	var e call.Envelope
	testenv.Eventually(p.t, 5*time.Second, 20*time.Millisecond, func() error {
		dead := p.dlq(subject)
		if len(dead) != 1 {
			return fmt.Errorf("%d dead letters on %s, want 1", len(dead), subject)
		}
		var err error
		e, err = call.Unmarshal(dead[0].Data)
		return err
	})
	return e
}

func stages(rec []call.Step) string {
	var s []string
	for _, st := range rec {
		s = append(s, st.Stage+":"+string(st.Status))
	}
	return strings.Join(s, " ")
}

func TestRepairPipeline_repaired_on_the_first_attempt_executes_once(t *testing.T) {
	for _, proto := range []model.Protocol{model.ProtocolOpenAIChat, model.ProtocolAnthropic} {
		t.Run(string(proto), func(t *testing.T) {
			ms := modeltest.New(t, proto, modeltest.ToolCall(proto, "create_invoice", validInvoice))
			p := startRepairPipeline(t, ms.Config(), streams.DefaultSettings())
			p.publish("resp-fix", "openai-chat", chat("resp-fix", "create_invoice", badCurrencyInvoice, "tool_calls"))
			rs := p.waitResults("resp-fix", 1)
			if rs[0]["status"] != "executed" || rs[0]["repair_attempts"] != float64(1) || rs[0]["call_id"] != "resp-fix-0" {
				t.Fatalf("result %v, want executed after one repair, same call id", rs[0])
			}
			if msg, _ := rs[0]["message"].(map[string]any); msg["tool_call_id"] != "call_resp-fix" {
				t.Fatalf("tool-result message %v does not answer the original provider call id", msg)
			}
			// Every gate ran twice: the re-entered call's hops carry
			// repair_attempts in their message ids, so none was de-duplicated.
			want := "accumulate:received parse:parsed validate:schema_invalid repair:repairing repair:received " +
				"parse:parsed validate:validated business:business_valid policy:approved execute:executed"
			if got := stages(p.status("resp-fix-0").History); got != want {
				t.Fatalf("history %q, want %q", got, want)
			}
			if n := p.executed.Load(); n != 1 {
				t.Fatalf("executed %d times, want 1", n)
			}
			if n := ms.Requests(); n != 1 {
				t.Fatalf("%d model requests, want 1", n)
			}
		})
	}
}

func TestRepairPipeline_still_invalid_after_the_cap_fails_with_every_attempt_kept(t *testing.T) {
	p0 := model.ProtocolAnthropic
	// Anthropic sends input as an object; the normalizer keeps its canonical
	// JSON (sorted keys), so the answer is written canonically here.
	stillBad := `{"currency":"USD","customer_id":"cus_9821","line_items":[{"price_cents":4900,"quantity":0,"sku":"PRO-SEAT"}]}`
	ms := modeltest.New(t, p0, modeltest.ToolCall(p0, "create_invoice", stillBad))
	p := startRepairPipeline(t, ms.Config(), streams.DefaultSettings())
	p.publish("resp-cap", "openai-chat", chat("resp-cap", "create_invoice", badCurrencyInvoice, "tool_calls"))
	rs := p.waitResults("resp-cap", 1)
	if rs[0]["status"] != "failed" || rs[0]["failure"] != "schema_invalid" || !strings.Contains(fmt.Sprint(rs[0]["errors"]), "quantity") {
		t.Fatalf("result %v, want failed/schema_invalid naming the repaired call's error", rs[0])
	}
	e := p.deadLetter(streams.DLQ("validate", "schema_invalid"))
	if len(e.Repairs) != 1 || e.Repairs[0].RawArguments != badCurrencyInvoice || e.Repairs[0].Answer != stillBad ||
		!strings.Contains(strings.Join(e.Repairs[0].Errors, " "), "currency") {
		t.Fatalf("dead letter repairs %+v, want the original raw text and errors and the model's answer", e.Repairs)
	}
	if e.RawArguments != stillBad || e.RepairAttempts != 1 {
		t.Fatalf("dead letter raw %q attempts %d, want the repaired raw text after 1 attempt", e.RawArguments, e.RepairAttempts)
	}
	if n, x := ms.Requests(), p.executed.Load(); n != 1 || x != 0 {
		t.Fatalf("%d model requests, %d executions; want 1 and 0", n, x)
	}
}

func TestRepairPipeline_text_that_information_is_missing_needs_clarification(t *testing.T) {
	p0 := model.ProtocolOpenAIChat
	ms := modeltest.New(t, p0, modeltest.Text(p0, "The customer's currency is missing: please provide USD, EUR or GBP."))
	p := startRepairPipeline(t, ms.Config(), streams.DefaultSettings())
	p.publish("resp-ask", "openai-chat", chat("resp-ask", "create_invoice", badCurrencyInvoice, "tool_calls"))
	rs := p.waitResults("resp-ask", 1)
	if rs[0]["status"] != "needs_clarification" || !strings.Contains(fmt.Sprint(rs[0]["errors"]), "currency is missing") {
		t.Fatalf("result %v, want needs_clarification with the model's text", rs[0])
	}
	e := p.deadLetter(streams.DLQ("repair", "needs_clarification"))
	if len(e.Repairs) != 1 || !strings.Contains(e.Repairs[0].Answer, "currency is missing") {
		t.Fatalf("repairs %+v, want the model's text kept", e.Repairs)
	}
	if n, x := ms.Requests(), p.executed.Load(); n != 1 || x != 0 {
		t.Fatalf("%d model requests, %d executions; want 1 (no second attempt) and 0", n, x)
	}
}

func TestRepairPipeline_truncated_again_fails_asking_for_a_smaller_payload(t *testing.T) {
	p0 := model.ProtocolOpenAIChat
	cut := `{"customer_id":"cus_9821","currency":"USD","line_items":[{"sku":"PRO-SEAT","quantity":3,"price_cents":49`
	cutAgain := `{"customer_id":"cus_9821","currency":"USD","line_items":[{"sku":"PRO-SEAT","qua`
	ms := modeltest.New(t, p0, modeltest.Truncated(p0, "create_invoice", cutAgain))
	p := startRepairPipeline(t, ms.Config(), streams.DefaultSettings())
	p.publish("resp-trunc", "openai-chat", chat("resp-trunc", "create_invoice", cut, "length"))
	rs := p.waitResults("resp-trunc", 1)
	if rs[0]["status"] != "failed" || rs[0]["failure"] != "truncated" || !strings.Contains(fmt.Sprint(rs[0]["text"]), "smaller payload") {
		t.Fatalf("result %v, want failed/truncated with a text asking for a smaller payload", rs[0])
	}
	if !strings.Contains(string(ms.Bodies()[0]), "Send a smaller payload") {
		t.Fatal("the repair request did not ask for a smaller payload")
	}
	e := p.deadLetter(streams.DLQ("parse", "truncated"))
	if e.RawArguments != cutAgain || len(e.Repairs) != 1 || e.Repairs[0].RawArguments != cut {
		t.Fatalf("dead letter raw %q repairs %+v, want both cut texts", e.RawArguments, e.Repairs)
	}
	if n, x := ms.Requests(), p.executed.Load(); n != 1 || x != 0 {
		t.Fatalf("%d model requests, %d executions; want 1 and 0", n, x)
	}
}

func TestRepairPipeline_429_then_success_retries_once(t *testing.T) {
	p0 := model.ProtocolAnthropic
	ms := modeltest.New(t, p0, modeltest.Status(p0, 429, "0"), modeltest.ToolCall(p0, "create_invoice", validInvoice))
	cfg := ms.Config()
	cfg.MaxRetries = 2
	p := startRepairPipeline(t, cfg, streams.DefaultSettings())
	p.publish("resp-429", "openai-chat", chat("resp-429", "create_invoice", badCurrencyInvoice, "tool_calls"))
	if rs := p.waitResults("resp-429", 1); rs[0]["status"] != "executed" {
		t.Fatalf("result %v, want executed", rs[0])
	}
	if n, x := ms.Requests(), p.executed.Load(); n != 2 || x != 1 {
		t.Fatalf("%d model requests, %d executions; want 2 and 1", n, x)
	}
}

func TestRepairPipeline_model_that_hangs_is_retried_within_bounds_then_dead_lettered(t *testing.T) {
	p0 := model.ProtocolOpenAIChat
	ms := modeltest.New(t, p0, modeltest.Hang())
	cfg := ms.Config()
	cfg.Timeout, cfg.MaxRetries, cfg.MaxBackoff = 150*time.Millisecond, 1, 10*time.Millisecond
	settings := streams.DefaultSettings()
	settings.MaxDeliver = 2
	p := startRepairPipeline(t, cfg, settings)
	p.publish("resp-hang", "openai-chat", chat("resp-hang", "create_invoice", badCurrencyInvoice, "tool_calls"))
	rs := p.waitResults("resp-hang", 1)
	// The call keeps its class (and its schema errors) for the model; the
	// errors also say why the repair could not run.
	errs := fmt.Sprint(rs[0]["errors"])
	if rs[0]["status"] != "failed" || rs[0]["failure"] != "schema_invalid" || !strings.Contains(errs, "timed out") || !strings.Contains(errs, "max_deliver") || !strings.Contains(errs, "currency") {
		t.Fatalf("result %v, want failed/schema_invalid with the schema error and the timeout", rs[0])
	}
	// Two deliveries of the repair input, each one request and one retry.
	if n, x := ms.Requests(), p.executed.Load(); n != 4 || x != 0 {
		t.Fatalf("%d model requests, %d executions; want 4 (2 deliveries x 2 requests) and 0", n, x)
	}
	e := p.deadLetter(streams.DLQ("validate", "schema_invalid"))
	if e.RawArguments != badCurrencyInvoice {
		t.Fatalf("dead letter raw %q, want the original call kept for a replay", e.RawArguments)
	}
}

func TestRepairPipeline_repair_that_changes_the_tool_passes_policy_again(t *testing.T) {
	p0 := model.ProtocolOpenAIChat
	ms := modeltest.New(t, p0, modeltest.ToolCall(p0, "delete_customer_account", `{"customer_id":"cus_9821","reason":"requested"}`))
	p := startRepairPipeline(t, ms.Config(), streams.DefaultSettings())
	p.publish("resp-swap", "openai-chat", chat("resp-swap", "create_invoice", badCurrencyInvoice, "tool_calls"),
		streams.HeaderPrincipal, "agent-7", streams.HeaderRoles, "support")
	rs := p.waitResults("resp-swap", 1)
	if rs[0]["status"] != "policy_rejected" || rs[0]["tool"] != "delete_customer_account" {
		t.Fatalf("result %v, want policy_rejected for delete_customer_account", rs[0])
	}
	rec := p.status("resp-swap-0")
	if rec.Tool != "delete_customer_account" || !strings.Contains(stages(rec.History), "repair:received parse:parsed validate:validated business:business_valid policy:policy_rejected") {
		t.Fatalf("status record %s %q, want the changed tool judged by every gate again", rec.Tool, stages(rec.History))
	}
	noted := false
	for _, s := range rec.History {
		noted = noted || strings.Contains(s.Note, `tool changed from "create_invoice" to "delete_customer_account"`)
	}
	if !noted {
		t.Fatalf("history %+v does not record the changed tool", rec.History)
	}
	if n, x := ms.Requests(), p.executed.Load(); n != 1 || x != 0 {
		t.Fatalf("%d model requests, %d executions; want 1 and 0", n, x)
	}
}
