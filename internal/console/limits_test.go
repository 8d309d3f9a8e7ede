package console

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"
)

const limitedTools = `
tools:
  - name: refund
    input_schema: {type: object, properties: {customer_id: {type: string}, amount_cents: {type: integer}}}
    policy: {risk: write}
    limits:
      - {name: refunds_per_customer, key: 'tenant + ":" + args.customer_id', window: 1h, count: 5}
  - name: get_weather
    input_schema: {type: object}
    policy: {risk: read}
limits:
  - {name: refund_budget, tools: [refund], window: 24h, weight: args.amount_cents, max: 50000, on_exceed: wait, max_wait: 1m}
`

// seedLimits registers the tools above and the status records of three
// calls: one a limit holds now, one it rejected, one it held and let go.
func (r *rig) seedLimits() {
	r.t.Helper()
	ctx := context.Background()
	defs, err := tool.Load("tools.yaml", []byte(limitedTools))
	if err != nil {
		r.t.Fatal(err)
	}
	kv, _ := r.js.KeyValue(ctx, streams.BucketTools)
	if _, err := registry.Apply(ctx, kv, "tools.yaml", defs, false); err != nil {
		r.t.Fatal(err)
	}
	now := time.Now().UTC()
	approved := []call.Step{{Stage: streams.Policy, Status: call.Approved, At: now.Add(-time.Minute)}}
	why := "limit refund_budget: 45000 of 50000 per 24h used; this call fits from " + now.Add(30*time.Second).Format(time.RFC3339)
	r.putStatus(pipeline.StatusRecord{CallID: "lim-held-0", ResponseID: "lim-held", Tool: "refund", Status: call.Approved,
		History: append(approved, call.Step{Stage: streams.Execute, Status: call.Approved, At: now, Note: pipeline.WaitNotePrefix + why}),
		Waiting: &pipeline.Wait{Stage: streams.Execute, For: pipeline.WaitLimit, Limit: "refund_budget", Detail: why, Since: now, Next: now.Add(30 * time.Second)}})
	r.putStatus(pipeline.StatusRecord{CallID: "lim-rej-0", ResponseID: "lim-rej", Tool: "refund", Status: call.LimitExceeded,
		Errors:  []string{"limit refunds_per_customer: 5 of 5 per 1h used; this call fits from " + now.Add(time.Hour).Format(time.RFC3339)},
		History: append(approved, call.Step{Stage: streams.Execute, Status: call.LimitExceeded, At: now})})
	r.putStatus(pipeline.StatusRecord{CallID: "lim-ran-0", ResponseID: "lim-ran", Tool: "refund", Status: call.Executed,
		History: append(approved, call.Step{Stage: streams.Execute, Status: call.Approved, At: now, Note: pipeline.WaitNotePrefix + why},
			call.Step{Stage: streams.Execute, Status: call.Executed, At: now.Add(30 * time.Second)})})
}

// A viewer, through the console's least-privilege NATS user, sees every
// limit (maximum, window, key expression, what happens over it, its
// tools) and the calls a limit holds now; a call's story names the limit
// that holds, rejected or held it, linked to the limits page.
func TestLimitsPage_a_viewer_sees_each_limit_and_what_waits(t *testing.T) {
	r := newRigAs(t, map[string]Role{viewerToken: Viewer}, map[string]string{viewerToken: "vera"}, true)
	r.session(viewerToken)
	if code, body := r.get(Prefix + "limits"); code != 200 || !strings.Contains(body, `data-testid="no-limits"`) || !strings.Contains(body, `data-testid="none-held"`) {
		t.Fatalf("no limits: %d\n%s", code, body)
	}
	r.seedLimits()
	code, body := r.get(Prefix + "limits")
	for _, want := range []string{
		`id="limit-refunds_per_customer"`, "5 calls", "<td>1h</td>", `tenant &#43; &#34;:&#34; &#43; args.customer_id`, "<td>reject</td>",
		`id="limit-refund_budget"`, "50000 of args.amount_cents", "<td>24h</td>", "wait up to 1m", `href="/console/tools/refund"`,
		`data-testid="held-refund_budget"`, `href="/console/calls/lim-held-0"`, "limit refund_budget: 45000 of 50000 per 24h used",
		`data-testid="no-metrics"`, `href="/console/limits" class="on"`,
	} {
		if code != 200 || !strings.Contains(body, want) {
			t.Fatalf("GET limits: %d, want %q:\n%s", code, want, body)
		}
	}
	for _, id := range []string{"lim-rej-0", "lim-ran-0"} {
		if strings.Contains(body, `/console/calls/`+id) {
			t.Fatalf("%s does not wait, yet the limits page lists it", id)
		}
	}
	for id, want := range map[string]string{
		"lim-held-0": `held by <a href="/console/limits#limit-refund_budget">refund_budget</a>`,
		"lim-rej-0":  `rejected by <a href="/console/limits#limit-refunds_per_customer">refunds_per_customer</a>`,
		"lim-ran-0":  `held, then let go, by <a href="/console/limits#limit-refund_budget">refund_budget</a>`,
	} {
		if code, body := r.get(Prefix + "calls/" + id); code != 200 || !strings.Contains(body, want) {
			t.Fatalf("story of %s: %d, want %q:\n%s", id, code, want, body)
		}
	}
}

func TestLimitsPage_without_a_session_gets_nothing(t *testing.T) {
	r := newRigAs(t, map[string]Role{viewerToken: Viewer}, map[string]string{viewerToken: "vera"}, true)
	r.seedLimits()
	r.noSession(Prefix+"limits", "refund_budget", "lim-held-0")
}

// In `toolgate up` the page counts each limit's events from the pipeline's
// metrics, by limit name only.
func TestLimitMetrics_fill_rows_from_the_limit_metrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	ev := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolgate_limit_events_total"}, []string{"limit", "event"})
	fill := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "toolgate_limit_fill_ratio"}, []string{"limit"})
	reg.MustRegister(ev, fill)
	ev.WithLabelValues("a", "charged").Add(100)
	ev.WithLabelValues("a", "rejected").Add(900)
	ev.WithLabelValues("a", "waited").Add(3)
	ev.WithLabelValues("gone", "charged").Add(1)
	fill.WithLabelValues("a").Set(0.5)
	rows := map[string]*limitRow{"a": {Name: "a"}}
	if !limitMetrics(reg.Gather, rows) {
		t.Fatal("metrics not read")
	}
	if a := rows["a"]; a.Charged != 100 || a.Rejected != 900 || a.Waited != 3 || a.Fill != 50 {
		t.Fatalf("row %+v, want 100 charged, 900 rejected, 3 held, 50%% full", *a)
	}
}
