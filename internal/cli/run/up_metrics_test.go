package run

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/clitest"
)

// TestUp_default_serves_metrics_of_every_stage: the default toolgate up
// runs each stage as its own NATS user, and before served /readyz only —
// no /metrics, so nothing an operator alerts on could be scraped from it.
func TestUp_default_serves_metrics_of_every_stage(t *testing.T) {
	u := clitest.StartUp(t)
	resp, err := http.Get("http://" + u.HTTP + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s\n%s", resp.Status, body)
	}
	text := string(body)
	for _, st := range streams.Names() {
		if want := `toolgate_consumer_pending{stage="` + st + `"}`; !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, want := range []string{`llm_tool_call_total{outcome="executed",provider="openai-chat",tool="create_invoice"} 0`, "toolgate_approvals_pending 0"} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
