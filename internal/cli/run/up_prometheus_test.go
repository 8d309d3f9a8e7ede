package run

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/clitest"
)

// The shipped files, as an operator installs them.
const (
	shippedRules     = "../../../deploy/prometheus/toolgate-rules.yml"
	shippedDashboard = "../../../deploy/grafana/toolgate-dashboard.json"
)

// promInterval is the test Prometheus's scrape and evaluation interval.
const promInterval = time.Second

// TestUp_first_events_fire_the_alerts_in_a_real_prometheus is issue 41: in
// Debian's Prometheus scraping `toolgate up` every second, the first dead
// letter of its class and the first forged envelope never fired
// ToolgateDeadLettersIncreasing or ToolgateSealInvalid, because their
// series were born at 1 and increase() saw no increase. The rules are
// loaded as shipped; the events happen after Prometheus's first scrape of
// the pipeline, as the first events of a run do.
func TestUp_first_events_fire_the_alerts_in_a_real_prometheus(t *testing.T) {
	testenv.Program(t, "prometheus") // before the build: say what is missing first
	u := clitest.StartUp(t)
	prom := testenv.RunPrometheus(t, u.HTTP, promInterval, shippedRules)
	testenv.Eventually(t, 30*time.Second, 100*time.Millisecond, func() error {
		s, err := prom.Query(`up{job="toolgate"} == 1`)
		if err == nil && len(s) == 0 {
			err = fmt.Errorf("prometheus has not scraped %s yet", u.HTTP)
		}
		return err
	})

	// The first dead letter of its class: a call whose arguments end
	// mid-object, published by the producer. No repair model: it fails at
	// parse, classified truncated.
	producer, _ := clitest.Dial(t, u.URL, authz.ClientOptions(authz.Producer, u.Password(t, authz.Producer))...)
	in := nats.NewMsg(streams.SubjectInResponse)
	in.Data = []byte(`{"id":"prom-cut","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_cut","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]},"finish_reason":"tool_calls"}]}`)
	in.Header.Set(streams.HeaderProvider, "openai-chat")
	in.Header.Set(streams.HeaderResponseID, "prom-cut")
	pjs, err := jetstream.New(producer)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := pjs.PublishMsg(ctx, in); err != nil {
		t.Fatalf("publish as the producer: %v", err)
	}

	// The first forged envelope: approved, no seal, put on execute's input
	// by the one stage user that may publish there (policy), as a
	// compromised stage would.
	policy, _ := clitest.Dial(t, u.URL, authz.ClientOptions(streams.Policy, u.Password(t, streams.Policy))...)
	forged := call.New("prom-forged", 0, time.Now())
	forged.Provider, forged.ToolName = "openai-chat", "delete_customer_account"
	forged.RawArguments = `{"customer_id":"cus_victim","reason":"forged"}`
	forged.Arguments = json.RawMessage(forged.RawArguments)
	forged.Batch = call.Batch{ID: forged.ResponseID, Size: 1}
	for _, st := range []call.Status{call.Parsed, call.Validated, call.BusinessValid, call.Approved} {
		forged.History = append(forged.History, call.Step{Stage: streams.Policy, Status: st, At: time.Now()})
	}
	forged.Status = call.Approved
	body, err := forged.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	fm := nats.NewMsg(streams.Gate(streams.Execute))
	fm.Data = body
	fm.Header.Set(streams.HeaderCallID, forged.CallID)
	fm.Header.Set(streams.HeaderResponseID, forged.ResponseID)
	if err := policy.PublishMsg(fm); err != nil {
		t.Fatal(err)
	}
	if err := policy.Flush(); err != nil {
		t.Fatal(err)
	}

	// The first malformed record of its source: a tool definition that is
	// not one, written by the admin.
	admin, _ := clitest.Dial(t, u.URL, authz.ClientOptions(authz.Admin, u.Password(t, authz.Admin))...)
	ajs, err := jetstream.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := ajs.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tools.Put(ctx, "prom_broken", []byte("{not a definition")); err != nil {
		t.Fatal(err)
	}

	// All three are counted (each stage of `toolgate up` reads the tools
	// bucket, so the malformed definition may count once per stage).
	metricsURL := "http://" + u.HTTP + "/metrics"
	var sealStage string
	testenv.Eventually(t, 30*time.Second, 100*time.Millisecond, func() error {
		text, err := promGet(metricsURL)
		if err != nil {
			return err
		}
		for _, series := range []string{`toolgate_dead_letters_total{failure="truncated",stage="parse"}`,
			`toolgate_dead_letters_total{failure="seal_invalid",stage="execute"}`,
			`toolgate_malformed_records_total{source="toolgate_tools"}`} {
			if v := promValue(text, series); v == "" || v == "0" {
				return fmt.Errorf("%s serves %s at %q", metricsURL, series, v)
			}
		}
		for _, line := range strings.Split(text, "\n") {
			if rest, ok := strings.CutPrefix(line, `toolgate_seal_invalid_total{stage="`); ok && !strings.HasSuffix(rest, " 0") {
				sealStage, _, _ = strings.Cut(rest, `"`)
				return nil
			}
		}
		return fmt.Errorf("%s serves no toolgate_seal_invalid_total above 0", metricsURL)
	})

	// Within a few evaluation intervals (one to scrape, one to evaluate,
	// and slack for a loaded machine) the alerts fire, rules as shipped.
	want := []map[string]string{
		{"alertname": "ToolgateDeadLettersIncreasing", "stage": "parse", "failure": "truncated"},
		{"alertname": "ToolgateDeadLettersIncreasing", "stage": "execute", "failure": "seal_invalid"},
		{"alertname": "ToolgateSealInvalid", "stage": sealStage},
		{"alertname": "ToolgateMalformedRecords", "source": "toolgate_tools"},
	}
	countedAt := time.Now()
	var active []testenv.Alert
	err = testenv.Poll(8*promInterval, promInterval/10, func() error {
		var err error
		if active, err = prom.Alerts(); err != nil {
			return err
		}
		for _, w := range want {
			if !slices.ContainsFunc(active, func(a testenv.Alert) bool { return a.State == "firing" && promMatches(a.Labels, w) }) {
				return fmt.Errorf("%v is not firing", w)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the first events did not fire their alerts within %v of being served: %v\nactive alerts: %+v", 8*promInterval, err, active)
	}
	t.Logf("alerts firing %v after the counters were served", time.Since(countedAt).Round(10*time.Millisecond))

	// The dashboard's panels on these counters show the first events too.
	for _, q := range []struct {
		panel string
		want  map[string]string
	}{
		{"Dead letters by class", map[string]string{"failure": "truncated", "stage": "parse"}},
		{"Seal failures by stage", map[string]string{"stage": sealStage}},
		{"Seal failures (1h)", map[string]string{}},
		{"Malformed records by source", map[string]string{"source": "toolgate_tools"}},
	} {
		expr := promPanel(t, q.panel)
		s, err := prom.Query(expr)
		if err != nil {
			t.Errorf("panel %q: %v", q.panel, err)
			continue
		}
		if !slices.ContainsFunc(s, func(s testenv.Sample) bool { return s.Value > 0 && maps.Equal(s.Metric, q.want) }) {
			t.Errorf("panel %q (%s) does not show the first event %v: %+v", q.panel, expr, q.want, s)
		}
	}

	// Every rule is healthy and every expression evaluates; every metric an
	// alert names is one the pipeline serves (Prometheus answers nothing,
	// not an error, for a metric nobody exports: an alert on it would never
	// fire).
	rules, err := prom.Rules()
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 {
		t.Fatal("prometheus loaded no rules")
	}
	text, err := promGet(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if r.Health == "err" || r.LastError != "" {
			t.Errorf("rule %s: health %s: %s", r.Name, r.Health, r.LastError)
		}
		if _, err := prom.Query(r.Query); err != nil {
			t.Errorf("rule %s: %v", r.Name, err)
		}
		for _, name := range promMetricsOf(t, r.Query) {
			if name == "up" { // Prometheus's own, per target
				continue
			}
			// A limit's series exist once a definition has a limit; this
			// up applies none. deploy's TestObservability_every_metric_named_
			// is_served_by_a_real_pipeline defines one and checks them.
			if name == "toolgate_limit_fill_ratio" || name == "toolgate_limit_events_total" {
				continue
			}
			if !strings.Contains(text, "\n"+name+"{") && !strings.Contains(text, "\n"+name+" ") {
				t.Errorf("rule %s names %s, which %s does not serve", r.Name, name, metricsURL)
			}
			if s, err := prom.Query(fmt.Sprintf("count(%s)", name)); err != nil || len(s) == 0 {
				t.Errorf("rule %s names %s, which prometheus has no series of (%v)", r.Name, name, err)
			}
		}
	}
}

// promMatches reports whether got has every label of want.
func promMatches(got, want map[string]string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// promMetricsOf lists the metric names expr selects.
func promMetricsOf(t *testing.T, expr string) []string {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		t.Fatalf("%q: %v", expr, err)
	}
	var out []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok && !slices.Contains(out, vs.Name) {
			out = append(out, vs.Name)
		}
		return nil
	})
	return out
}

// promPanel is the query of the shipped dashboard's panel titled title,
// its rate interval set to a minute.
func promPanel(t *testing.T, title string) string {
	t.Helper()
	data, err := os.ReadFile(shippedDashboard)
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
		Panels []json.RawMessage `json:"panels"`
	}
	var d struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	var found string
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.Title == title && len(p.Targets) > 0 && found == "" {
				found = p.Targets[0].Expr
			}
			for _, raw := range p.Panels {
				var sub panel
				if json.Unmarshal(raw, &sub) == nil {
					walk([]panel{sub})
				}
			}
		}
	}
	walk(d.Panels)
	if found == "" {
		t.Fatalf("%s has no panel %q", shippedDashboard, title)
	}
	return strings.ReplaceAll(found, "$__rate_interval", "1m")
}

// promValue is the value text serves for series ("" when none).
func promValue(text, series string) string {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

// promGet reads url's body.
func promGet(url string) (string, error) {
	res, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", url, res.Status)
	}
	return string(b), nil
}
