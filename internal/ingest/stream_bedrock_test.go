package ingest

import (
	"fmt"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/testenv"
)

// Bedrock ConverseStream events of one toolUse call, in the wrapped JSON
// form of the AWS SDKs and of vercel/ai's recordings.
var (
	bedrockCallEvents = [][]byte{
		[]byte(`{"messageStart":{"role":"assistant"}}`),
		[]byte(`{"contentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"tu-1","name":"get_weather"}}}}`),
		[]byte(`{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"city\":"}}}}`),
		[]byte(`{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":"\"Paris\"}"}}}}`),
		[]byte(`{"contentBlockStop":{"contentBlockIndex":0}}`),
	}
	bedrockMessageStop = []byte(`{"messageStop":{"stopReason":"tool_use"}}`)
	bedrockMetadata    = []byte(`{"metadata":{"usage":{"inputTokens":12,"outputTokens":30,"totalTokens":42},"metrics":{"latencyMs":80}}}`)
)

// A Bedrock stream settles whichever order its last two events come in, and
// without metadata after a short grace (issue 32: vercel/ai's recordings put
// metadata before messageStop, whose calls were withheld, or send none, and
// those streams never ended). The idle timeout is an hour: only the end
// events or the grace can settle these streams.
func TestStream_bedrock_settles_in_either_order_and_without_metadata(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	const grace = 300 * time.Millisecond
	a := gate(r.js, time.Hour)
	a.OptionalGrace = grace
	runAccumulate(t, r.js, a, nil)
	for _, c := range []struct {
		name     string
		tail     [][]byte
		minDelay time.Duration
	}{
		{"aws-order", [][]byte{bedrockMessageStop, bedrockMetadata}, 0},
		{"metadata-first", [][]byte{bedrockMetadata, bedrockMessageStop}, 0},
		{"no-metadata", [][]byte{bedrockMessageStop}, grace},
	} {
		t.Run(c.name, func(t *testing.T) {
			rid := "bedrock-" + c.name
			evs := append(append([][]byte(nil), bedrockCallEvents...), c.tail...)
			start := time.Now()
			publishEvents(t, r.js, rid, provider.BedrockConverse, inOrder(evs))
			testenv.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error {
				got := r.parsedFor(rid)
				if len(got) != 1 {
					return fmt.Errorf("%d envelopes reached parse, want 1 (results %+v)", len(got), r.resultsFor(rid))
				}
				if got[0].ToolName != "get_weather" || got[0].RawArguments != `{"city":"Paris"}` {
					return fmt.Errorf("envelope %s %q", got[0].ToolName, got[0].RawArguments)
				}
				return nil
			})
			if took := time.Since(start); took < c.minDelay {
				t.Errorf("settled after %v, before the %v grace for the missing metadata", took, c.minDelay)
			}
			r.finishedMark(t, rid)
		})
	}
}
