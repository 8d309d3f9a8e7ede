package arch

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/streams"
)

// TestStages_do_not_link_nats_server: a stage binary is a NATS client only;
// the embedded server (internal/natsusers, testenv) is for toolgate up,
// chaos and tests.
func TestStages_do_not_link_nats_server(t *testing.T) {
	for _, st := range streams.Names() {
		out, err := exec.Command("go", "list", "-deps", "../../services/"+st).Output()
		if err != nil {
			t.Fatalf("go list -deps services/%s: %v", st, err)
		}
		for _, pkg := range strings.Fields(string(out)) {
			if strings.Contains(pkg, "nats-io/nats-server") {
				t.Errorf("services/%s links %s", st, pkg)
				break
			}
		}
	}
}
