package testenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// PrometheusInstall is how to get the prometheus and promtool programs the
// alert tests run (make test's preflight installs them).
const PrometheusInstall = "apt-get install -y prometheus"

// Program finds a program of Debian's prometheus package (prometheus,
// promtool) on PATH, or fails the test saying how to install it.
func Program(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("testenv: %s not found on PATH (%v): install it with `%s`", name, err, PrometheusInstall)
	}
	return path
}

// Prometheus is a real prometheus server started by a test.
type Prometheus struct {
	URL string // http://127.0.0.1:port
	log *bytes.Buffer
}

// RunPrometheus starts prometheus on a free loopback port with its storage
// in a temporary directory, scraping target (host:port, path /metrics) as
// job "toolgate" and evaluating ruleFiles, both every interval; it returns
// once the server is ready and stops it when the test ends.
func RunPrometheus(t testing.TB, target string, interval time.Duration, ruleFiles ...string) *Prometheus {
	t.Helper()
	bin := Program(t, "prometheus")
	dir := t.TempDir()
	var rules []string
	for _, f := range ruleFiles {
		abs, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, fmt.Sprintf("  - %q\n", abs))
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: %s\n  scrape_timeout: %s\n  evaluation_interval: %s\nrule_files:\n%sscrape_configs:\n  - job_name: toolgate\n    static_configs:\n      - targets: [%q]\n",
		interval, interval, interval, strings.Join(rules, ""), target)
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &Prometheus{URL: fmt.Sprintf("http://127.0.0.1:%d", FreePort(t)), log: &bytes.Buffer{}}
	cmd := exec.Command(bin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+strings.TrimPrefix(p.URL, "http://"), "--log.level=warn")
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: start prometheus: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("prometheus log:\n%s", p.log.String())
		}
	})
	Eventually(t, 30*time.Second, 50*time.Millisecond, func() error {
		select {
		case <-done:
			return fmt.Errorf("prometheus exited: %s", p.log.String())
		default:
		}
		res, err := http.Get(p.URL + "/-/ready")
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("prometheus /-/ready: %s", res.Status)
		}
		return nil
	})
	return p
}

// Sample is one element of an instant vector.
type Sample struct {
	Metric map[string]string
	Value  float64
}

// Query evaluates expr now through the HTTP API; an error answer (a bad
// expression, an evaluation error) is an error.
func (p *Prometheus) Query(expr string) ([]Sample, error) {
	var data struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	if err := p.get("/api/v1/query?query="+url.QueryEscape(expr), &data); err != nil {
		return nil, err
	}
	var out []Sample
	for _, r := range data.Result {
		s, _ := r.Value[1].(string)
		var v float64
		if _, err := fmt.Sscan(s, &v); err != nil {
			return nil, fmt.Errorf("prometheus: %q: value %q: %w", expr, s, err)
		}
		out = append(out, Sample{Metric: r.Metric, Value: v})
	}
	return out, nil
}

// Alert is an active alert as /api/v1/alerts reports it.
type Alert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"` // pending or firing
	Value       string            `json:"value"`
}

// Alerts lists the active alerts.
func (p *Prometheus) Alerts() ([]Alert, error) {
	var data struct {
		Alerts []Alert `json:"alerts"`
	}
	err := p.get("/api/v1/alerts", &data)
	return data.Alerts, err
}

// Rule is a loaded rule as /api/v1/rules reports it.
type Rule struct {
	Name      string `json:"name"`
	Query     string `json:"query"`
	Type      string `json:"type"`   // alerting or recording
	Health    string `json:"health"` // ok, err or unknown (not evaluated yet)
	LastError string `json:"lastError"`
}

// Rules lists every loaded rule.
func (p *Prometheus) Rules() ([]Rule, error) {
	var data struct {
		Groups []struct {
			Rules []Rule `json:"rules"`
		} `json:"groups"`
	}
	if err := p.get("/api/v1/rules", &data); err != nil {
		return nil, err
	}
	var out []Rule
	for _, g := range data.Groups {
		out = append(out, g.Rules...)
	}
	return out, nil
}

// get decodes the data of an API answer into v.
func (p *Prometheus) get(path string, v any) error {
	res, err := http.Get(p.URL + path)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return err
	}
	var answer struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return fmt.Errorf("prometheus %s: %s: %.200s", path, res.Status, body)
	}
	if answer.Status != "success" {
		return fmt.Errorf("prometheus %s: %s: %s", path, res.Status, answer.Error)
	}
	return json.Unmarshal(answer.Data, v)
}
