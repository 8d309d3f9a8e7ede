package deploy

import (
	"os/exec"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
)

// TestRules_promtool_unit_tests runs the rules' own unit tests
// (prometheus/toolgate-rules_test.yml) with promtool: a counter series born
// at its first event on a target Prometheus already scraped fires at once,
// and a Prometheus that was down does not fire every old count.
func TestRules_promtool_unit_tests(t *testing.T) {
	promtool := testenv.Program(t, "promtool")
	cmd := exec.Command(promtool, "test", "rules", "toolgate-rules_test.yml")
	cmd.Dir = "prometheus"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}
