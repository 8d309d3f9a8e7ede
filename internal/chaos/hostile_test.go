package chaos

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// The short hostile soak: toolgate up as a child process under a 4 GiB
// address-space cap, 3 s of valid calls, then 3 s more while the hostile
// inputs that settle without the 60 s stream idle timeout are published (a
// malformed approval record, a 70 KB tool name, a 6 MB HTTP answer, an 8 MB
// provider error, a 40 KB provider header, invalid UTF-8 and lone
// surrogates in arguments, case-folded keys). No crash, every valid call
// executed exactly once, every hostile input ends in a recorded outcome
// with no defect of issue 13 seen. `make hostile` runs every input, the
// streamed ones included, and the after phase: RSS is judged a minute after
// the attack (no GC cycle need come within a few seconds, so a short after
// phase would judge the collector's timing; the verdict itself is
// TestHostileReport_fails_when_RSS_does_not_come_back's).
func TestRunHostile_hostile_inputs_crash_nothing_and_every_outcome_is_recorded(t *testing.T) {
	dir := t.TempDir()
	var log strings.Builder
	rep, err := RunHostile(context.Background(), HostileConfig{
		Duration: 3 * time.Second, Rate: 20, Settle: time.Minute, After: -1, Dir: dir, Log: &log,
		Inputs: []string{"kv-approval", "tool-name-70k", "http-6mb", "provider-error-8mb", "provider-header-40k",
			"utf8-invalid", "utf8-surrogate", "utf8-surrogate-string", "key-case"},
	})
	var out strings.Builder
	rep.Print(&out)
	t.Logf("\n%s\n%s", log.String(), out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Inputs) != 9 || rep.Valid[PhaseAttack].Offered == 0 {
		t.Fatalf("%d hostile inputs judged, %d valid calls offered under attack: the soak did not run", len(rep.Inputs), rep.Valid[PhaseAttack].Offered)
	}
	if !rep.OK() {
		if b, err := os.ReadFile(dir + "/toolgate-up.log"); err == nil {
			if len(b) > 6000 {
				b = b[len(b)-6000:]
			}
			t.Logf("--- toolgate-up.log (tail)\n%s", b)
		}
		t.Fatalf("the hostile soak found %d violations (see above)", len(rep.Violations()))
	}
}
