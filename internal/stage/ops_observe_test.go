package stage

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

func TestOps_audit_of_a_call_carrying_an_api_key_and_a_card_contains_neither(t *testing.T) {
	o := startOps(t)
	const key, card = "sk-proj-AbCdEfGhIjKlMnOpQrSt123", "4111 1111 1111 1111"
	args := `{"city":"Paris","api_key":"` + key + `","card":"` + card + `"}`
	o.publish("resp-secret", "openai-chat", chat("resp-secret", "get_weather", args, "tool_calls"))
	o.publish("resp-fine", "openai-chat", chat("resp-fine", "get_weather", `{"city":"Paris"}`, "tool_calls"))
	if rs := o.waitResults("resp-secret", 1); rs[0]["failure"] != "schema_invalid" {
		t.Fatalf("result %v, want schema_invalid (unknown properties)", rs[0])
	}
	o.waitResults("resp-fine", 1)
	var audit string // the audit events ride in the results (issue 30)
	testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
		audit = o.resultAuditText()
		if !strings.Contains(audit, "resp-secret-0") || !strings.Contains(audit, "resp-fine-0") {
			return fmt.Errorf("audit events missing: %s", audit)
		}
		return nil
	})
	for _, secret := range []string{key, "AbCdEfGhIjKlMnOpQrSt123", card, "4111111111111111"} {
		if strings.Contains(audit, secret) {
			t.Errorf("the results' audit events hold %q", secret)
		}
	}
	for _, want := range []string{`"status":"failed"`, `"event_type":"tool_call_failed"`, `"failure_type":"schema_invalid"`,
		`"status":"executed"`, `"event_type":"tool_call_executed"`, `"raw_arguments_hash":"sha256:`, `"trace_id":"resp-secret"`} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit lacks %s", want)
		}
	}
	if s := o.streamText(streams.StreamAudit, ""); s != "" {
		t.Errorf("the audit stream was written without --audit-stream: %.300s", s)
	}
	var dead string // stored on its own stream, after the result and the audit event
	testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
		if dead = o.streamText(streams.StreamDLQ, ""); !strings.Contains(dead, "resp-secret-0") {
			return fmt.Errorf("no dead letter of resp-secret-0 yet")
		}
		return nil
	})
	if !strings.Contains(dead, key) || !strings.Contains(dead, card) {
		t.Error("the dead-letter stream does not keep the raw arguments")
	}
	log := o.log.String()
	if strings.Contains(log, key) || strings.Contains(log, card) {
		t.Error("the log holds a secret")
	}
	for _, want := range []string{`"call_id":"resp-secret-0","stage":"validate","status":"schema_invalid"`, `"call_id":"resp-fine-0","stage":"execute","status":"executed"`} {
		if !strings.Contains(log, want) {
			t.Errorf("no transition log line with %s", want)
		}
	}
}

// metric is the value of one series in a scrape (0 when absent).
func metric(t *testing.T, scrape, series string) float64 {
	t.Helper()
	for _, l := range strings.Split(scrape, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	return 0
}

func TestOps_metrics_move_for_each_failure_class(t *testing.T) {
	o := startOps(t)
	before := o.scrape()
	for _, c := range []struct{ rid, args, finish string }{
		{"m-json", `{"city": Paris}`, "tool_calls"},
		{"m-cut", `{"city":"Par`, "length"},
		{"m-schema", `{"city":7}`, "tool_calls"},
		{"m-execfail", `{"city":"Atlantis"}`, "tool_calls"},
		{"m-ok", `{"city":"Paris"}`, "tool_calls"},
	} {
		o.publish(c.rid, "openai-chat", chat(c.rid, "get_weather", c.args, c.finish))
		o.waitResults(c.rid, 1)
	}
	after := o.scrape()
	series := func(name, outcome string) string {
		return fmt.Sprintf(`%s{outcome=%q,provider="openai-chat",tool="get_weather"}`, name, outcome)
	}
	for _, s := range []string{
		series("llm_tool_call_invalid_json_total", "invalid_json"),
		series("llm_tool_call_truncated_total", "truncated"),
		series("llm_tool_call_schema_invalid_total", "schema_invalid"),
		series("llm_tool_call_execution_failed_total", "execution_failed"),
		series("llm_tool_call_total", "invalid_json"),
		series("llm_tool_call_total", "truncated"),
		series("llm_tool_call_total", "schema_invalid"),
		series("llm_tool_call_total", "execution_failed"),
		series("llm_tool_call_total", "executed"),
	} {
		if d := metric(t, after, s) - metric(t, before, s); d != 1 {
			t.Errorf("%s moved by %v, want 1", s, d)
		}
	}
	for _, st := range []string{"accumulate", "parse", "validate", "repair", "execute"} {
		if n := metric(t, after, fmt.Sprintf(`toolgate_stage_handle_seconds_count{result="ok",stage=%q}`, st)); n < 1 {
			t.Errorf("no handler latency recorded for %s", st)
		}
	}
	for _, st := range streams.Names() {
		if !strings.Contains(after, fmt.Sprintf(`toolgate_consumer_pending{stage=%q}`, st)) {
			t.Errorf("no consumer pending for %s", st)
		}
	}
}
