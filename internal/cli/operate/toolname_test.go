package operate

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/redact"

	"github.com/toolgate/toolgate/internal/cli/clitest"
	"github.com/toolgate/toolgate/internal/cli/publish"
)

// Before, toolgate status (and the console's Calls page) showed a call of
// a tool nobody registered as unregistered:f97bfb67d99b while its dead
// letter showed convert_curency, with nothing tying the two together. The
// public form stays the one everyone sees; status now says where the name
// is, and dlq show prints the public form beside the name.
func TestStatus_and_dlq_show_tie_an_unregistered_name_to_its_public_form(t *testing.T) {
	r, _ := startDLQRig(t)
	r.publish("typo-1", "convert_curency", `{"amount": 100}`, "")
	id := "typo-1-0"
	r.status(id, func(s call.Status) bool { return s == call.Failed })
	public := redact.ToolName("convert_curency", nil)

	var out bytes.Buffer
	if err := publish.RunStatus(&out, []string{id, "--nats", r.u.URL}); err != nil && clitest.Code(err) != 3 {
		t.Fatalf("status: %v\n%s", err, out.String())
	}
	if want := "tool      " + public + "  (not a registered tool; the name as the model wrote it is only in the call's dead letter: toolgate dlq ls --call " + id + ")"; !strings.Contains(out.String(), want) {
		t.Errorf("status lacks %q:\n%s", want, out.String())
	}

	ls := r.letters(1)
	shown := r.mustRun("show", strconv.FormatUint(ls[0].Seq, 10))
	if want := "tool        convert_curency (revision 0; not registered: status, calls ls, the logs and the console's Calls page show it as " + public + ")"; !strings.Contains(shown, want) {
		t.Errorf("dlq show lacks %q:\n%s", want, shown)
	}
}
