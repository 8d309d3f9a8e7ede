package operate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
)

// Before, a call with no principal, roles or tenant was shown to the
// approver as `caller  (roles , tenant , identity unverified)` (and by
// approvals show as `roles []`). Now each empty field says none.
func TestConfirm_an_empty_caller_reads_none(t *testing.T) {
	e := call.New("resp-1", 0, time.Now())
	e.CallID, e.ToolName, e.Arguments, e.Status = "c-1", "delete_customer_account", json.RawMessage(`{}`), call.ApprovalRequired
	r, err := approval.NewRecord(e, "irreversible", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := (console{in: strings.NewReader("n\n"), out: &out, terminal: true}).confirm(r); err != nil {
		t.Fatal(err)
	}
	if want := "caller     none (roles none, tenant none, identity unverified)"; !strings.Contains(out.String(), want) {
		t.Errorf("want %q in:\n%s", want, out.String())
	}
}
