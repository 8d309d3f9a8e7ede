package console

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/shadow"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/whatif"
	"github.com/toolgate/toolgate/streams"
)

const viewerToken = "rig-viewer-token-0123456789"

// seedShadow applies a shadow of get_weather and stores its report record
// as the policy stage writes it, both as the admin.
func (r *rig) seedShadow() shadow.Revision {
	r.t.Helper()
	ctx := context.Background()
	defs, err := tool.Load("new.yaml", []byte(`
tools:
  - name: get_weather
    input_schema: {type: object, properties: {city: {type: string}}}
    policy: {risk: read, allow: "'ops' in roles"}
`))
	if err != nil {
		r.t.Fatal(err)
	}
	tools, _ := r.js.KeyValue(ctx, streams.BucketTools)
	shadows, _ := r.js.KeyValue(ctx, streams.BucketToolsShadow)
	reports, err := r.js.KeyValue(ctx, streams.BucketShadowReport)
	if err != nil {
		r.t.Fatal(err)
	}
	rev, err := shadow.Apply(ctx, tools, shadows, reports, "new.yaml", defs, time.Now(), 1<<20)
	if err != nil {
		r.t.Fatal(err)
	}
	rec := shadow.Record{Shadow: rev.ID, Tool: "get_weather", Seen: 5, Unchanged: 3, Changes: []*whatif.Change{{
		Was: string(call.Approved), Would: "would be rejected: policy_rejected", Why: "the policy allows only when 'ops' in roles",
		Count: 2, Examples: []string{"shw-1-0", "shw-2-0"}, Refused: true,
	}}}
	b, _ := json.Marshal(rec)
	if _, err := reports.Put(ctx, "get_weather", b); err != nil {
		r.t.Fatal(err)
	}
	return rev
}

func TestShadowPage_a_viewer_sees_the_report_as_the_console_user(t *testing.T) {
	r := newRigAs(t, map[string]Role{viewerToken: Viewer}, map[string]string{viewerToken: "vera"}, true)
	r.session(viewerToken)
	if code, body := r.get(Prefix + "shadow"); code != 200 || !strings.Contains(body, `data-testid="no-shadow"`) {
		t.Fatalf("no shadow: %d\n%s", code, body)
	}
	rev := r.seedShadow()
	code, body := r.get(Prefix + "shadow")
	for _, want := range []string{rev.ID, "5 compared, 3 unchanged", "would be rejected: policy_rejected", `href="/console/calls/shw-1-0"`, "2 call(s) that passed every gate would be refused"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Fatalf("GET shadow: %d, want %q:\n%s", code, want, body)
		}
	}
	if strings.Contains(body, `class="flash error">Unreadable`) {
		t.Fatalf("the console user could not read the report:\n%s", body)
	}
}

func TestShadowPage_without_a_session_gets_nothing(t *testing.T) {
	r := newRigAs(t, map[string]Role{viewerToken: Viewer}, map[string]string{viewerToken: "vera"}, true)
	rev := r.seedShadow()
	r.noSession(Prefix+"shadow", rev.ID, "policy_rejected")
}
