package stage

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/streams"
)

// TestTrust_unknown_tool_name_never_leaves_in_clear: issue 15's "Secrets"
// finding. A secret used as a tool name (a model echoing a key, a prompt
// injection) appeared in clear in the audit event's tool_name, the status
// record, every message header, every log line and as a metric label. Now a
// name that is not a registered tool leaves the process hashed
// (unregistered:<12 hex>) everywhere but the dead letter's body, the
// operator's evidence, which keeps it; the result keeps it too, as it goes
// back to the producer who sent it.
func TestTrust_unknown_tool_name_never_leaves_in_clear(t *testing.T) {
	const secret = "sk_live_SECRET123"
	o := startOps(t)
	o.publish("leak", "openai-chat", chat("leak", secret, `{"amount":1}`, "tool_calls"))
	r := o.waitResults("leak", 1)[0]
	if r["status"] != "failed" || r["failure"] != "no_such_tool" {
		t.Fatalf("ended %v/%v, want failed/no_such_tool", r["status"], r["failure"])
	}
	o.allSettled()
	rec := o.status("leak-0")

	where := map[string]string{
		"the audit event":           o.resultAuditText() + o.streamText(streams.StreamAudit, ""),
		"the status record":         o.streamText("KV_"+streams.BucketCalls, ""),
		"the metrics":               o.scrape(),
		"the log":                   o.log.String(),
		"the result's headers":      headersOf(o, streams.StreamResults),
		"the dead letter's headers": headersOf(o, streams.StreamDLQ),
	}
	for what, text := range where {
		if strings.Contains(text, secret) {
			t.Errorf("%s names the unregistered tool in clear: %.400s", what, text[strings.Index(text, secret)-min(strings.Index(text, secret), 200):])
		}
	}
	if !strings.HasPrefix(rec.Tool, "unregistered:") || !strings.Contains(where["the audit event"], `"tool_name":"unregistered:`) {
		t.Errorf("status record tool %q / audit event without the hashed name", rec.Tool)
	}
	if !strings.Contains(where["the log"], `"tool":"`+rec.Tool+`"`) {
		t.Errorf("the log does not name the call's tool as the status record does (%s)", rec.Tool)
	}
	if !strings.Contains(o.streamText(streams.StreamDLQ, ""), secret) {
		t.Error("the dead letter lost the tool name the call was sent with: the evidence is gone")
	}
}

// headersOf is every header of every message in stream, joined.
func headersOf(o *ops, stream string) string {
	o.t.Helper()
	st, err := o.js.Stream(o.ctx, stream)
	if err != nil {
		o.t.Fatal(err)
	}
	info, err := st.Info(o.ctx)
	if err != nil {
		o.t.Fatal(err)
	}
	var b strings.Builder
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(o.ctx, seq)
		if err != nil {
			continue
		}
		for k, v := range m.Header {
			b.WriteString(m.Subject + " " + k + ":" + strings.Join(v, ",") + "\n")
		}
	}
	return b.String()
}
