package console

import (
	"html"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/redact"
)

// A call's story shows its arguments, redacted, from the audit event its
// result carries (issue 30), and from the audit stream for a call of
// before the upgrade, whose result has none.
func TestStory_reads_the_audit_in_the_result_then_the_audit_stream(t *testing.T) {
	r := newRigAs(t, map[string]Role{viewerToken: Viewer}, map[string]string{viewerToken: "vera"}, true)
	r.session(viewerToken)
	const key = "sk-proj-AbCdEfGhIjKlMnOpQrSt123"
	r.seedAuditedCall("st-new-0", `{"city":"Oslo","api_key":"`+key+`"}`, inResult)
	r.seedAuditedCall("st-old-0", `{"city":"Bergen"}`, onStream)
	for _, c := range []struct{ id, from, args string }{
		{"st-new-0", "the audit event in its result (tool_call_executed)", redact.Placeholder},
		{"st-old-0", "from the audit event (tool_call_executed)", "Bergen"},
	} {
		code, body := r.get(Prefix + "calls/" + c.id)
		body = html.UnescapeString(body)
		if code != 200 || !strings.Contains(body, c.from) || !strings.Contains(body, c.args) {
			t.Fatalf("%s: %d, want its arguments (%q) from %q:\n%s", c.id, code, c.args, c.from, body)
		}
		if strings.Contains(body, key) {
			t.Fatalf("%s: the story shows the secret", c.id)
		}
	}
}
