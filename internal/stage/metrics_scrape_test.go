package stage

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/toolserver"
)

// scrapeHTTP reads a running process's /metrics over HTTP.
func scrapeHTTP(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

// has reports whether the scrape holds series with a value satisfying ok.
func has(t *testing.T, scrape, series string, ok func(float64) bool) error {
	t.Helper()
	for _, l := range strings.Split(scrape, "\n") {
		if strings.HasPrefix(l, series+" ") {
			if v := metric(t, l, series); !ok(v) {
				return fmt.Errorf("%s is %v", series, v)
			}
			return nil
		}
	}
	return fmt.Errorf("no %s in the scrape", series)
}

// TestMetrics_what_an_operator_alerts_on_is_served_from_the_start: issue 17
// point "metrics an operator alerts on": the tool counters of every
// registered tool exist at zero before any call, and dead letters by stage
// and failure, pending approvals and each stage's oldest unacknowledged
// message are on /metrics of a running process.
func TestMetrics_what_an_operator_alerts_on_is_served_from_the_start(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	p := startRig(t, rig{
		serve: []string{"get_weather"}, // create_invoice has no executor: it waits in execute
		exec: func(name string, c toolserver.Call) (any, error) {
			if strings.Contains(string(c.Arguments), "Atlantis") {
				return nil, errors.New("no weather station in Atlantis")
			}
			return "sunny", nil
		},
		configure: func(c *Config) { c.HTTPAddr = addr },
	})
	zero := func(v float64) bool { return v == 0 }
	start := scrapeHTTP(t, addr)
	for _, s := range []string{
		`llm_tool_call_total{outcome="executed",provider="openai-chat",tool="create_invoice"}`,
		`llm_tool_call_total{outcome="execution_failed",provider="anthropic",tool="delete_customer_account"}`,
		`llm_tool_call_total{outcome="schema_invalid",provider="openai-chat",tool="get_weather"}`,
		`llm_tool_call_total{outcome="policy_rejected",provider="gemini",tool="unregistered"}`,
		`llm_tool_call_invalid_json_total{outcome="invalid_json",provider="ollama",tool="get_weather"}`,
		`llm_tool_call_execution_failed_total{outcome="execution_failed",provider="openai-chat",tool="get_weather"}`,
		`toolgate_approvals_pending`,
		`toolgate_approval_oldest_pending_seconds`,
		`toolgate_consumer_oldest_pending_seconds{stage="execute"}`,
	} {
		if err := has(t, start, s, zero); err != nil {
			t.Errorf("before any call: %v", err)
		}
	}

	p.publishAs("met-appr", "delete_customer_account", deleteArgs, "alice", "admin")
	p.publish("met-wait", "openai-chat", chat("met-wait", "create_invoice", validInvoice, "tool_calls"))
	p.publish("met-fail", "openai-chat", chat("met-fail", "get_weather", `{"city":"Atlantis"}`, "tool_calls"))
	p.waitRecord("met-appr-0", call.ApprovalRequired)
	p.waitResults("met-fail", 1)
	testenv.Eventually(t, 30*time.Second, 50*time.Millisecond, func() error {
		s := scrapeHTTP(t, addr)
		return errors.Join(
			has(t, s, `toolgate_approvals_pending`, func(v float64) bool { return v == 1 }),
			has(t, s, `toolgate_approval_oldest_pending_seconds`, func(v float64) bool { return v > 0 }),
			has(t, s, `toolgate_consumer_oldest_pending_seconds{stage="execute"}`, func(v float64) bool { return v > 0 }),
			has(t, s, `toolgate_consumer_oldest_pending_seconds{stage="parse"}`, zero),
			has(t, s, `toolgate_dead_letters{failure="execution_failed",stage="execute"}`, func(v float64) bool { return v == 1 }),
			has(t, s, `toolgate_dead_letters_total{failure="execution_failed",stage="execute"}`, func(v float64) bool { return v == 1 }),
			has(t, s, `llm_tool_call_total{outcome="execution_failed",provider="openai-chat",tool="get_weather"}`, func(v float64) bool { return v == 1 }),
		)
	})
}
