package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/rs/zerolog"

	dto "github.com/prometheus/client_model/go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/stage"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

const (
	rulesFile     = "prometheus/toolgate-rules.yml"
	dashboardFile = "grafana/toolgate-dashboard.json"
)

// promql is Prometheus's own PromQL parser with its default options, as
// Prometheus and promtool use it.
var promql = parser.NewParser(parser.Options{})

// query is one PromQL expression and where it was written.
type query struct{ where, expr string }

// ruleQueries parses the rules file with Prometheus's rule loader (which
// validates every expression, label and annotation template, as promtool
// check rules does) and returns the expressions.
func ruleQueries(t *testing.T) []query {
	t.Helper()
	groups, errs := rulefmt.ParseFile(rulesFile, false, model.UTF8Validation, promql, slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		t.Fatalf("%s: %v", rulesFile, errs)
	}
	var out []query
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			out = append(out, query{where: rulesFile + ": " + r.Alert + r.Record, expr: r.Expr})
		}
	}
	return out
}

// panel is the part of a Grafana panel the test reads; rows nest panels.
type panel struct {
	Title   string  `json:"title"`
	Type    string  `json:"type"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

// grafanaVars are the Grafana variables a panel's query may use, with a
// value of the right type for parsing. Any other $ is an error.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

// dashboardQueries decodes the dashboard strictly enough to find every
// panel's targets; a panel other than a row without a query is an error.
func dashboardQueries(t *testing.T, data []byte) []query {
	t.Helper()
	var d struct {
		UID    string  `json:"uid"`
		Title  string  `json:"title"`
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.UID == "" || d.Title == "" {
		t.Fatalf("%s: no uid or title", dashboardFile)
	}
	var out []query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s: panel %q has no query", dashboardFile, p.Title)
			}
			for _, tg := range p.Targets {
				out = append(out, query{where: fmt.Sprintf("%s: panel %q %s", dashboardFile, p.Title, tg.RefID), expr: grafanaVars.Replace(tg.Expr)})
			}
		}
	}
	walk(d.Panels)
	if len(out) == 0 {
		t.Fatalf("%s: no panel queries", dashboardFile)
	}
	return out
}

// metricNames parses every query and returns the metric names its selectors
// use, each with the first query that used it.
func metricNames(t *testing.T, qs []query) map[string]string {
	t.Helper()
	names := map[string]string{}
	for _, q := range qs {
		expr, err := promql.ParseExpr(q.expr)
		if err != nil {
			t.Errorf("%s: %q does not parse: %v", q.where, q.expr, err)
			continue
		}
		found := 0
		parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
			vs, ok := n.(*parser.VectorSelector)
			if !ok {
				return nil
			}
			name := vs.Name
			for _, m := range vs.LabelMatchers {
				if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
					name = m.Value
				}
			}
			if name == "" {
				t.Errorf("%s: %q selects series without naming a metric", q.where, q.expr)
				return nil
			}
			found++
			if _, seen := names[name]; !seen {
				names[name] = q.where
			}
			return nil
		})
		if found == 0 {
			t.Errorf("%s: %q names no metric", q.where, q.expr)
		}
	}
	return names
}

// served reports whether name is a series /metrics serves: a family, or a
// histogram's or summary's _bucket, _sum or _count.
func served(families map[string]*dto.MetricFamily, name string) bool {
	if _, ok := families[name]; ok {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		f, ok := families[base]
		if !ok {
			continue
		}
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			return true
		case dto.MetricType_SUMMARY:
			return suffix != "_bucket"
		}
	}
	return false
}

// prometheusOwn are the series Prometheus makes itself for every target
// (the counter alerts' "new series" clause reads up): no /metrics serves them.
var prometheusOwn = map[string]bool{"up": true}

func missing(families map[string]*dto.MetricFamily, names map[string]string) []string {
	var out []string
	for name, where := range names {
		if !served(families, name) && !prometheusOwn[name] {
			out = append(out, name+" (first used by "+where+")")
		}
	}
	slices.Sort(out)
	return out
}

func TestRules_parse_with_the_prometheus_rule_loader(t *testing.T) {
	qs := ruleQueries(t)
	alerts := map[string]bool{}
	for _, q := range qs {
		alerts[q.where[len(rulesFile)+2:]] = true
	}
	for _, want := range []string{"ToolgateDeadLettersIncreasing", "ToolgateOutcomeUnknown", "ToolgateSealInvalid",
		"ToolgateApprovalsAboutToExpire", "ToolgateStageStuck", "ToolgateMalformedRecords"} {
		if !alerts[want] {
			t.Errorf("%s has no alert %s", rulesFile, want)
		}
	}
	metricNames(t, qs)
}

func TestDashboard_every_panel_query_parses(t *testing.T) {
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	names := metricNames(t, dashboardQueries(t, data))
	for _, want := range []string{"toolgate_stage_handle_seconds_bucket", "llm_tool_call_total", "toolgate_consumer_pending",
		"toolgate_consumer_ack_pending", "toolgate_consumer_oldest_pending_seconds", "toolgate_dead_letters_total",
		"toolgate_dead_letters", "toolgate_approvals_pending", "toolgate_approval_oldest_pending_seconds", "toolgate_seal_invalid_total"} {
		if names[want] == "" {
			t.Errorf("%s: no panel shows %s", dashboardFile, want)
		}
	}
}

// TestDashboard_a_query_with_an_unknown_variable_does_not_parse keeps the
// variable substitution honest: only the variables listed are replaced.
func TestDashboard_a_query_with_an_unknown_variable_does_not_parse(t *testing.T) {
	bad := []byte(`{"uid":"x","title":"x","panels":[{"type":"timeseries","title":"p","targets":[{"refId":"A","expr":"rate(llm_tool_call_total[$window])"}]}]}`)
	qs := dashboardQueries(t, bad)
	if _, err := promql.ParseExpr(qs[0].expr); err == nil {
		t.Fatalf("%q parsed", qs[0].expr)
	}
}

func TestServed_resolves_histogram_suffixes_only_for_histograms(t *testing.T) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(
		"# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n# TYPE c counter\nc_total 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"h": true, "h_bucket": true, "h_sum": true, "h_count": true,
		"c_total": true, "c_total_bucket": false, "c": false, "nope": false, "nope_bucket": false} {
		if got := served(families, name); got != want {
			t.Errorf("served(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestObservability_every_metric_named_is_served_by_a_real_pipeline runs
// every stage in one stage.Run (as `toolgate up --insecure` does) with its
// /metrics on a free port, drives the traffic that makes each labelled
// series exist (an executed call, a failed one that is dead-lettered, a
// forged envelope refused for its seals, a malformed tool definition), and
// checks every metric a rule or a panel names against the scrape.
func TestObservability_every_metric_named_is_served_by_a_real_pipeline(t *testing.T) {
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	names := metricNames(t, append(ruleQueries(t), dashboardQueries(t, data)...))

	srv := testenv.RunJetStream(t)
	k := trustKeys(t)
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		// A tenant list: the per-tenant series (issue 37) are served only with one.
		set := streams.DefaultSettings()
		set.Fair.Tenants = []string{"obs"}
		done <- stage.Run(ctx, stage.Config{NATSURL: srv.ClientURL(), Stages: streams.Names(), HTTPAddr: addr, Settings: set,
			Seals: k.seals, Exec: stage.ExecConfig{Signer: k.signer},
			Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.ErrorLevel)}, ready)
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("pipeline stopped at start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("pipeline not ready")
	}
	t.Cleanup(func() { cancel(); <-done })
	admin, _ := testenv.Connect(t, srv)
	executor, _ := testenv.Connect(t, srv)
	r := newRig(t, admin, executor, k)

	// An executed call: every stage's handler histogram, llm_tool_call_total.
	if !r.publish("obs-ok") {
		t.Fatal("publish obs-ok")
	}
	// A call whose arguments are not JSON: a dead letter (counted and stored).
	bad := nats.NewMsg(streams.SubjectInResponse)
	bad.Data = []byte(strings.Replace(string(response("obs-bad")), `{\"city\":\"Paris\"}`, `{\"city\":`, 1))
	bad.Header.Set(streams.HeaderProvider, "openai-chat")
	bad.Header.Set(streams.HeaderResponseID, "obs-bad")
	if err := admin.PublishMsg(bad); err != nil {
		t.Fatal(err)
	}
	// A forged envelope on the execute gate, its seals made without the keys.
	forgedCall := call.New("obs-forged", 0, time.Now())
	forgedCall.Provider, forgedCall.ToolName = "openai-chat", "get_weather"
	forgedCall.RawArguments = `{"city":"Paris"}`
	forgedCall.Arguments = json.RawMessage(forgedCall.RawArguments)
	forgedCall.Batch = call.Batch{ID: "obs-forged", Size: 1}
	forgedCall.Status = call.Approved
	forgedCall.History = []call.Step{{Stage: streams.Policy, Status: call.Approved, At: time.Now()}}
	body, err := forgedCall.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	m := nats.NewMsg(streams.Gate(streams.Execute))
	m.Data = body
	m.Header.Set(streams.HeaderCallID, forgedCall.CallID)
	m.Header.Set(streams.HeaderResponseID, forgedCall.ResponseID)
	if err := admin.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	// A tool definition that is not one: a malformed record of the tools bucket.
	tools, err := r.js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tools.Put(ctx, "obs_broken", []byte("{not a definition")); err != nil {
		t.Fatal(err)
	}

	url := "http://" + addr + "/metrics"
	var left []string
	err = testenv.Poll(60*time.Second, 200*time.Millisecond, func() error {
		families, err := scrape(url)
		if err != nil {
			return err
		}
		if left = missing(families, names); len(left) > 0 {
			return fmt.Errorf("%d metrics not served", len(left))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s does not serve metrics the rules or the dashboard name: %v\n%s", url, err, strings.Join(left, "\n"))
	}
}

// scrape reads url in the Prometheus text format.
func scrape(url string) (map[string]*dto.MetricFamily, error) {
	res, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		return nil, fmt.Errorf("%s: %s: %s", url, res.Status, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(res.Body)
}
