package deploy

import (
	"testing"

	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

// helm lint (Helm's own rules: Chart.yaml, values, templates, YAML,
// deprecated APIs) reports nothing above INFO, in every autoscaling mode.
func TestHelm_chart_passes_helm_lint(t *testing.T) {
	for _, mode := range []string{"keda", "hpa", "none"} {
		l := lint.All(chartDir, map[string]any{"autoscaling": map[string]any{"mode": mode}}, helmNamespace, false)
		for _, m := range l.Messages {
			if m.Severity > support.InfoSev {
				t.Errorf("%s: %s", mode, m)
			}
		}
	}
}
