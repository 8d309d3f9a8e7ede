package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/streams"
)

const whatIfTools = `
tools:
  - name: transfer_funds
    input_schema: {type: object, properties: {amount: {type: integer}}, required: [amount]}
    rules:
      - {expr: "args.amount <= 1000", message: "no transfer over 1000"}
    policy: {risk: write}
`

// recordedCall stores what the pipeline keeps of an executed call: the
// whole response in TOOLGATE_IN and the call's final status record.
func (r *rig) recordedCall(rid, tool, args string) {
	r.t.Helper()
	ctx := context.Background()
	body, _ := json.Marshal(map[string]any{"id": "chatcmpl-" + rid, "object": "chat.completion", "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{"role": "assistant",
			"tool_calls": []any{map[string]any{"id": "tc-" + rid, "type": "function", "function": map[string]any{"name": tool, "arguments": args}}}}}}})
	m := nats.NewMsg(streams.SubjectInResponse)
	m.Header.Set(streams.HeaderProvider, "openai-chat")
	m.Header.Set(streams.HeaderResponseID, rid)
	m.Data = body
	if _, err := r.js.PublishMsg(ctx, m); err != nil {
		r.t.Fatal(err)
	}
	now := time.Now()
	e := call.New(rid, 0, now)
	e.ToolName, e.RawArguments, e.Provider = tool, args, "openai-chat"
	for _, st := range []call.Status{call.Parsed, call.Validated, call.BusinessValid, call.Approved, call.Executed} {
		if err := e.Move("test", st, now); err != nil {
			r.t.Fatal(err)
		}
	}
	r.putStatus(pipeline.StatusOf(e))
}

func TestWhatIf_a_viewer_sees_what_a_definition_would_do_and_nothing_changes(t *testing.T) {
	r := newRigAs(t, map[string]Role{"viewer-token-0123456789": Viewer}, nil, true)
	for i, amount := range []int{100, 5000, 9000} {
		r.recordedCall(fmt.Sprint("wi", i), "transfer_funds", fmt.Sprintf(`{"amount":%d}`, amount))
	}
	// Not logged in: nothing.
	if code, _ := r.post(Prefix+"tools/whatif", url.Values{"definition": {whatIfTools}}); code != http.StatusUnauthorized {
		t.Fatalf("logged out: %d, want 401", code)
	}
	r.login("viewer-token-0123456789")
	csrf := r.csrf(Prefix + "tools")
	if _, body := r.get(Prefix + "tools"); !strings.Contains(body, `data-testid="whatif-form"`) {
		t.Fatalf("the tools page has no what-if form:\n%s", body)
	}
	if code, _ := r.post(Prefix+"tools/whatif", url.Values{"definition": {whatIfTools}}); code != http.StatusForbidden {
		t.Fatalf("without csrf: %d, want 403", code)
	}
	code, body := r.post(Prefix+"tools/whatif", url.Values{"csrf": {csrf}, "definition": {whatIfTools}, "hours": {"24"}})
	for _, w := range []string{
		`<span data-testid="seen">3</span> seen · <span data-testid="unchanged">1</span> unchanged`,
		`<td class="num" data-testid="count">2</td><td>executed</td><td data-testid="would">would be rejected: business_invalid</td><td>no transfer over 1000</td>`,
		`href="/console/calls/wi1-0"`,
		"2 call(s) that passed every gate would now be refused",
	} {
		if code != 200 || !strings.Contains(body, w) {
			t.Errorf("what if: %d, want %q:\n%s", code, w, body)
		}
	}
	if code, body := r.post(Prefix+"tools/whatif", url.Values{"csrf": {csrf}, "definition": {"tools: [{name: 1"}}); code != http.StatusBadRequest || !strings.Contains(body, `class="flash error"`) {
		t.Errorf("a broken definition: %d\n%s", code, body)
	}
	kv, err := r.js.KeyValue(context.Background(), streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(context.Background(), "transfer_funds"); err == nil {
		t.Error("the what-if stored the definition")
	}
}
