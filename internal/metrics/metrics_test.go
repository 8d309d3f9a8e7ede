package metrics

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func env(tool string, st call.Status, steps ...call.Step) call.Envelope {
	e := call.New("r1", 0, time.Unix(0, 0))
	e.ToolName, e.Provider = tool, "openai-chat"
	e.Status = st
	e.History = append(e.History, steps...)
	return e
}

func TestTransition_counts_each_failure_class_and_terminal_outcomes(t *testing.T) {
	m := New()
	m.Transition("parse", env("get_weather", call.InvalidJSON))
	m.Transition("validate", env("get_weather", call.SchemaInvalid))
	m.Transition("validate", env("get_weather", call.SchemaInvalid))
	m.Transition("parse", env("create_invoice", call.Truncated))
	m.Transition("execute", env("create_invoice", call.ExecutionFailed))
	failed := env("get_weather", call.Failed)
	failed.Failure = call.SchemaInvalid
	m.Transition("repair", failed)
	m.Transition("execute", env("get_weather", call.Executed))
	m.Transition("validate", env("get_weather", call.Validated)) // not terminal, no class
	out := scrape(t, m)
	for _, want := range []string{
		`llm_tool_call_invalid_json_total{outcome="invalid_json",provider="openai-chat",tool="get_weather"} 1`,
		`llm_tool_call_schema_invalid_total{outcome="schema_invalid",provider="openai-chat",tool="get_weather"} 2`,
		`llm_tool_call_truncated_total{outcome="truncated",provider="openai-chat",tool="create_invoice"} 1`,
		`llm_tool_call_execution_failed_total{outcome="execution_failed",provider="openai-chat",tool="create_invoice"} 1`,
		`llm_tool_call_total{outcome="schema_invalid",provider="openai-chat",tool="get_weather"} 1`,
		`llm_tool_call_total{outcome="executed",provider="openai-chat",tool="get_weather"} 1`,
		`llm_tool_call_total{outcome="execution_failed",provider="openai-chat",tool="create_invoice"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(out, `outcome="validated"`) {
		t.Error("a non-terminal, non-failure transition was counted")
	}
}

func TestTransition_counts_a_repair_attempt_only_in_the_visit_that_made_it(t *testing.T) {
	m := New()
	at := time.Unix(10, 0)
	// Attempt: schema_invalid -> repairing -> received.
	repaired := env("get_weather", call.Received,
		call.Step{Stage: "validate", Status: call.SchemaInvalid, At: at},
		call.Step{Stage: "repair", Status: call.Repairing, At: at},
		call.Step{Stage: "repair", Status: call.Received, At: at})
	m.Transition("repair", repaired)
	// Bound reached on the next round: failed without an attempt.
	bounded := repaired
	bounded.History = append(append([]call.Step(nil), repaired.History...),
		call.Step{Stage: "validate", Status: call.SchemaInvalid, At: at},
		call.Step{Stage: "repair", Status: call.Failed, At: at})
	bounded.Status, bounded.Failure = call.Failed, call.SchemaInvalid
	m.Transition("repair", bounded)
	out := scrape(t, m)
	if !strings.Contains(out, `llm_tool_call_repair_attempts_total{outcome="received",provider="openai-chat",tool="get_weather"} 1`) {
		t.Errorf("repair attempt not counted once with outcome received:\n%s", grep(out, "repair_attempts"))
	}
	if strings.Contains(out, `llm_tool_call_repair_attempts_total{outcome="schema_invalid"`) {
		t.Error("a failure without an attempt counted as an attempt")
	}
}

func TestObserve_records_latency_per_stage_and_result(t *testing.T) {
	m := New()
	m.Observe("parse", 3*time.Millisecond, nil)
	m.Observe("parse", time.Second, errors.New("boom"))
	out := scrape(t, m)
	for _, want := range []string{
		`toolgate_stage_handle_seconds_count{result="ok",stage="parse"} 1`,
		`toolgate_stage_handle_seconds_count{result="error",stage="parse"} 1`,
		`toolgate_stage_handle_seconds_bucket{result="ok",stage="parse",le="0.005"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
}

func TestWatchConsumers_reports_pending_at_scrape_and_stops(t *testing.T) {
	m := New()
	n := uint64(7)
	stop := m.WatchConsumers([]string{"parse", "execute"}, func(_ context.Context, st string) (*jetstream.ConsumerInfo, error) {
		if st == "execute" {
			return nil, errors.New("no answer")
		}
		return &jetstream.ConsumerInfo{NumPending: n, NumAckPending: 2}, nil
	})
	out := scrape(t, m)
	if !strings.Contains(out, `toolgate_consumer_pending{stage="parse"} 7`) || !strings.Contains(out, `toolgate_consumer_ack_pending{stage="parse"} 2`) {
		t.Errorf("pending of parse missing:\n%s", grep(out, "consumer"))
	}
	if strings.Contains(grep(out, "toolgate_consumer_"), `stage="execute"`) {
		t.Error("a consumer that did not answer was reported")
	}
	n = 9
	if out := scrape(t, m); !strings.Contains(out, `toolgate_consumer_pending{stage="parse"} 9`) {
		t.Error("pending not read again at the next scrape")
	}
	stop()
	if out := scrape(t, m); strings.Contains(out, "toolgate_consumer_pending") {
		t.Error("pending still reported after stop")
	}
}

func grep(s, word string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
