package arch

import (
	"os/exec"
	"strings"
	"testing"
)

// TestGates_import_no_nats: the envelope gates are pure cores, one envelope
// in and the envelopes it became out; reading streams and buckets is
// internal/ingest's and internal/batch's. No non-test file of
// internal/gates imports a nats-io package. (Through worker, streams,
// approval, execute and batch, gates still links nats.go.)
func TestGates_import_no_nats(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{join .Imports \"\\n\"}}", "../gates").Output()
	if err != nil {
		t.Fatalf("go list internal/gates: %v", err)
	}
	imports := strings.Fields(string(out))
	if len(imports) == 0 {
		t.Fatal("go list listed no imports of internal/gates")
	}
	for _, pkg := range imports {
		if strings.Contains(pkg, "nats-io/") {
			t.Errorf("internal/gates imports %s: move the code that needs it to internal/ingest or internal/batch", pkg)
		}
	}
}
