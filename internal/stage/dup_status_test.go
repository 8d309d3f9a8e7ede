package stage

import (
	"testing"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/streams"
)

// TestPipeline_duplicate_response_with_a_new_msg_id_leaves_the_record_executed:
// issue 39's finding. The same response published again under a new
// Nats-Msg-Id (stored twice; its claim matches, so accumulate processes it
// as before) must not leave the call's status record at
// accumulate:received once the call executed.
func TestPipeline_duplicate_response_with_a_new_msg_id_leaves_the_record_executed(t *testing.T) {
	p := startPipeline(t)
	body := chat("dup-new-id", "get_weather", `{"city":"Oslo"}`, "tool_calls")
	p.publish("dup-new-id", "openai-chat", body)
	p.waitStatus("dup-new-id-0", call.Executed)
	p.publish("dup-new-id", "openai-chat", body, "Nats-Msg-Id", "dup-new-id:again")
	p.settled(streams.Accumulate)
	p.allSettled()
	if rec := p.status("dup-new-id-0"); rec.Status != call.Executed {
		t.Fatalf("status record %s, want executed; history %s", rec.Status, fmtJSON(rec.History))
	}
	if n := p.executed.Load(); n != 1 {
		t.Fatalf("executed %d times, want once", n)
	}
}
