package pipeline

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/streams"
)

// A tool name that is not registered (here a secret pasted as a name) is
// hashed in every header, the status record, the audit event (the result's
// and the audit stream's) and the batch
// mark (whose error the other calls of an atomic batch would quote); the dead
// letter's body keeps it as evidence, and the result keeps it for the
// producer who sent it. A registered name stays as it is.
func TestOutputs_unregistered_tool_name_is_hashed_outside_the_dead_letter(t *testing.T) {
	const secret = "sk_live_SECRET123"
	em := &Emitter{Registered: func(n string) bool { return n == "create_invoice" }, AuditStream: true}
	e := call.New("r1", 0, time.Unix(0, 0))
	e.Provider, e.ToolName, e.RawArguments = "openai-chat", secret, `{"a":1}`
	// One of two calls: its failed batch mark names it to the other call's abort.
	e.Batch = call.Batch{ID: "r1", Index: 0, Size: 2}
	if err := e.Move("test", call.Parsed, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := e.Move(streams.Validate, call.NoSuchTool, time.Unix(0, 0), `there is no tool named "`+secret+`"`); err != nil {
		t.Fatal(err)
	}
	if err := e.Move(streams.Repair, call.Failed, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	e.Failure = call.NoSuchTool
	outs, err := em.Outputs(streams.Repair, e)
	if err != nil {
		t.Fatal(err)
	}
	var dlq, result, marks int
	for _, o := range outs {
		for k, v := range o.Header {
			if strings.Contains(strings.Join(v, " "), secret) {
				t.Errorf("%s: header %s = %v names the unregistered tool in clear", o.Subject, k, v)
			}
		}
		switch {
		case strings.HasPrefix(o.Subject, "toolgate.dlq."):
			dlq++
			if !strings.Contains(string(o.Data), secret) {
				t.Errorf("the dead letter lost the tool name it was sent with: %s", o.Data)
			}
		case strings.HasPrefix(o.Subject, "toolgate.results."):
			result++
			var r Result
			if err := json.Unmarshal(o.Data, &r); err != nil || r.Audit == nil {
				t.Fatalf("result without its audit event (%v): %s", err, o.Data)
			}
			audit, _ := json.Marshal(r.Audit)
			if strings.Contains(string(audit), secret) || !strings.HasPrefix(r.Audit.ToolName, "unregistered:") {
				t.Errorf("the result's audit event names the unregistered tool in clear: %s", audit)
			}
		default:
			if strings.Contains(o.Subject, streams.BucketBatches) {
				marks++
			}
			if strings.Contains(string(o.Data), secret) {
				t.Errorf("%s names the unregistered tool in clear: %s", o.Subject, o.Data)
			}
			if strings.HasPrefix(o.Subject, "toolgate.audit.") && !strings.Contains(string(o.Data), `"tool_name":"unregistered:`) {
				t.Errorf("audit event without the hashed name: %s", o.Data)
			}
		}
	}
	if dlq != 1 || result != 1 || marks != 1 {
		t.Fatalf("%d dead letters, %d results and %d batch marks in %v, want one each", dlq, result, marks, subjects(outs))
	}

	reg := terminal(t, "create_invoice", call.ExecutionFailed, nil, "boom")
	outs, err = em.Outputs(streams.Execute, reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Header != nil && o.Header.Get(streams.HeaderTool) != "create_invoice" {
			t.Errorf("%s: a registered name was changed to %q", o.Subject, o.Header.Get(streams.HeaderTool))
		}
	}
}
