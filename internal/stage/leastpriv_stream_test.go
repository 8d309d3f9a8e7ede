package stage

import (
	"os"
	"strconv"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/streams"
)

func TestLeastPrivilege_streamed_response_is_assembled_with_the_accumulate_permissions(t *testing.T) {
	p, denied := startLeastPrivilegePipeline(t)
	// The accumulate gate reads a stream's events back through its own
	// short-lived consumer, marks the response done and reports progress.
	sse, err := os.ReadFile("../../testdata/provider-fixtures/openai-chat/openai-gpt-4o-single-tool-call.stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	events, err := provider.SplitTranscript(sse)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range events {
		m := nats.NewMsg(streams.InStream("lp-stream"))
		m.Data = ev
		m.Header.Set(streams.HeaderProvider, "openai-chat")
		m.Header.Set(streams.HeaderResponseID, "lp-stream")
		m.Header.Set(streams.HeaderSeq, strconv.Itoa(i+1))
		if _, err := p.js.PublishMsg(p.ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	rs := waitOrDenied(t, p, denied, "lp-stream", 1)
	// GetWeatherArgs is no registered tool: validate, then repair, fail it.
	if rs[0]["status"] != "failed" || rs[0]["failure"] != "no_such_tool" {
		t.Fatalf("result %v, want failed/no_such_tool", rs[0])
	}
	if errs := denied.All(); len(errs) > 0 {
		t.Fatalf("the stages needed permissions they do not have: %v", errs)
	}
}
