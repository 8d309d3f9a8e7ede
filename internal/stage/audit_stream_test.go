package stage

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// With --audit-stream (Config.AuditStream) a call's audit event is in its
// result and on toolgate.audit.<status> as well, the same event, for a SIEM
// subscribed there; without it (TestOps_audit_of_a_call_...) only in the
// result.
func TestOps_audit_stream_option_writes_the_event_in_the_result_and_on_the_stream(t *testing.T) {
	o := startOpsWith(t, func(c *Config) { c.AuditStream = true })
	o.publish("resp-both", "openai-chat", chat("resp-both", "get_weather", `{"city":"Paris"}`, "tool_calls"))
	o.waitResults("resp-both", 1)
	var inResult, onStream *pipeline.AuditEvent
	testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
		for _, ev := range o.resultAudits() {
			if ev.CallID == "resp-both-0" {
				inResult = &ev
			}
		}
		st, err := o.js.Stream(o.ctx, streams.StreamAudit)
		if err != nil {
			return err
		}
		m, err := st.GetLastMsgForSubject(o.ctx, streams.Audit("executed"))
		if err != nil {
			return fmt.Errorf("no event on %s: %w", streams.Audit("executed"), err)
		}
		var ev pipeline.AuditEvent
		if err := json.Unmarshal(m.Data, &ev); err != nil {
			return err
		}
		onStream = &ev
		if inResult == nil {
			return fmt.Errorf("the result carries no audit event")
		}
		return nil
	})
	if !reflect.DeepEqual(*inResult, *onStream) || onStream.CallID != "resp-both-0" || onStream.EventType != pipeline.EventExecuted {
		t.Fatalf("the result's event %+v and the stream's %+v differ", *inResult, *onStream)
	}
}
