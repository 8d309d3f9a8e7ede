package stage

import (
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// publishEvents publishes a stream's events on the subject of tenant's
// streams (wire.InStreamFor) as a producer does, numbered from 1, with the tenant given.
func (p *pipe) publishEvents(rid, prov, tenant string, events [][]byte) {
	p.t.Helper()
	for i, ev := range events {
		m := nats.NewMsg(wire.InStreamFor(tenant, rid))
		m.Data = ev
		m.Header.Set(streams.HeaderProvider, prov)
		m.Header.Set(streams.HeaderResponseID, rid)
		if tenant != "" {
			m.Header.Set(streams.HeaderTenant, tenant)
		}
		m.Header.Set(streams.HeaderSeq, strconv.Itoa(i+1))
		if _, err := p.js.PublishMsg(p.ctx, m); err != nil {
			p.t.Fatal(err)
		}
	}
}

// resultOn returns the one result stored on exactly
// toolgate.results.<tenant>.<rid>.
func (p *pipe) resultOn(tenant, rid string) map[string]any {
	p.t.Helper()
	p.waitResults(rid, 1)
	st, err := p.js.Stream(p.ctx, streams.StreamResults)
	if err != nil {
		p.t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(p.ctx, streams.Results(tenant, rid))
	if err != nil {
		p.t.Fatalf("no result on %s: %v", streams.Results(tenant, rid), err)
	}
	var r map[string]any
	if err := json.Unmarshal(m.Data, &r); err != nil {
		p.t.Fatal(err)
	}
	return r
}

// esFrame frames one ConverseStream event as Bedrock's HTTP body does
// (application/vnd.amazon.eventstream), the payload unwrapped.
func esFrame(eventType, payload string) []byte {
	var h []byte
	for _, kv := range [][2]string{{":event-type", eventType}, {":content-type", "application/json"}, {":message-type", "event"}} {
		h = append(h, byte(len(kv[0])))
		h = append(h, kv[0]...)
		h = append(h, 7)
		h = binary.BigEndian.AppendUint16(h, uint16(len(kv[1])))
		h = append(h, kv[1]...)
	}
	b := binary.BigEndian.AppendUint32(nil, uint32(16+len(h)+len(payload)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(h)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	b = append(append(b, h...), payload...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// Each new provider, whole and streamed, goes through every gate to
// executed like the others, and the result comes back on
// toolgate.results.<tenant>.<rid> in that provider's own format: a Converse
// toolResult block, a Cohere v2 tool message. The Bedrock stream is a raw
// event-stream body split as `toolgate publish` splits it.
func TestPipeline_bedrock_and_cohere_execute_through_every_gate_whole_and_streamed(t *testing.T) {
	p := startPipeline(t)
	const args = `{"city":"Paris","units":"c"}`
	var frames []byte
	for _, ev := range [][2]string{
		{"messageStart", `{"role":"assistant","p":"abc"}`},
		{"contentBlockStart", `{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"tooluse_s1","name":"get_weather"}},"p":"abcdef"}`},
		{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"city\":\"Par"}},"p":"ab"}`},
		{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"toolUse":{"input":"is\",\"units\":\"c\"}"}},"p":"abcd"}`},
		{"contentBlockStop", `{"contentBlockIndex":0,"p":"abcdefg"}`},
		{"messageStop", `{"stopReason":"tool_use","p":"a"}`},
		{"metadata", `{"usage":{"inputTokens":50,"outputTokens":30,"totalTokens":80},"metrics":{"latencyMs":300},"p":"abc"}`},
	} {
		frames = append(frames, esFrame(ev[0], ev[1])...)
	}
	if !provider.IsTranscript(frames) {
		t.Fatal("the event-stream body is not a transcript")
	}
	bedrockEvents, err := provider.SplitTranscript(frames)
	if err != nil {
		t.Fatal(err)
	}
	cohereEvents := [][]byte{
		[]byte(`{"id":"co-1","type":"message-start","delta":{"message":{"role":"assistant","content":[],"tool_plan":"","tool_calls":[],"citations":[]}}}`),
		[]byte(`{"type":"tool-plan-delta","delta":{"message":{"tool_plan":"I will look up the weather."}}}`),
		[]byte(`{"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":{"id":"get_weather_s1","type":"function","function":{"name":"get_weather","arguments":""}}}}}`),
		[]byte(`{"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":"{\"city\":\"Par"}}}}}`),
		[]byte(`{"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":"is\",\"units\":\"c\"}"}}}}}`),
		[]byte(`{"type":"tool-call-end","index":0}`),
		[]byte(`{"type":"message-end","delta":{"finish_reason":"TOOL_CALL","usage":{"billed_units":{"output_tokens":20},"tokens":{"output_tokens":31}}}}`),
	}
	for _, test := range []struct {
		name, prov, rid, id string
		whole               []byte
		events              [][]byte
	}{
		{"bedrock whole", provider.BedrockConverse, "bd-whole", "tooluse_w1",
			[]byte(`{"output":{"message":{"role":"assistant","content":[{"text":"Checking."},{"toolUse":{"toolUseId":"tooluse_w1","name":"get_weather","input":` + args + `}}]}},"stopReason":"tool_use","usage":{"inputTokens":50,"outputTokens":30,"totalTokens":80},"metrics":{"latencyMs":300}}`), nil},
		{"bedrock event-stream", provider.BedrockConverse, "bd-stream", "tooluse_s1", nil, bedrockEvents},
		{"cohere whole", provider.Cohere, "co-whole", "get_weather_w1",
			[]byte(`{"id":"co-w","message":{"role":"assistant","tool_plan":"I will look up the weather.","tool_calls":[{"id":"get_weather_w1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"units\":\"c\"}"}}]},"finish_reason":"TOOL_CALL","usage":{"billed_units":{"input_tokens":9,"output_tokens":20},"tokens":{"input_tokens":900,"output_tokens":31}}}`), nil},
		{"cohere stream", provider.Cohere, "co-stream", "get_weather_s1", nil, cohereEvents},
	} {
		t.Run(test.name, func(t *testing.T) {
			if test.whole != nil {
				p.publish(test.rid, test.prov, test.whole, streams.HeaderTenant, "acme")
			} else {
				p.publishEvents(test.rid, test.prov, "acme", test.events)
			}
			r := p.resultOn("acme", test.rid)
			if r["status"] != "executed" || r["ok"] != true {
				t.Fatalf("result %v, want executed", r)
			}
			msg, _ := json.Marshal(r["message"])
			switch test.prov {
			case provider.BedrockConverse:
				want := `{"toolResult":{"content":[{"json":{"call":"` + wire.CallID("acme", test.rid, 0) + `","done":"get_weather"}}],"status":"success","toolUseId":"` + test.id + `"}}`
				if string(msg) != want {
					t.Fatalf("message %s\nwant %s", msg, want)
				}
			case provider.Cohere:
				var m struct {
					Role       string `json:"role"`
					ToolCallID string `json:"tool_call_id"`
					Content    []struct {
						Type     string `json:"type"`
						Document struct {
							Data string `json:"data"`
						} `json:"document"`
					} `json:"content"`
				}
				if err := json.Unmarshal(msg, &m); err != nil || m.Role != "tool" || m.ToolCallID != test.id || len(m.Content) != 1 ||
					m.Content[0].Type != "document" || !strings.Contains(m.Content[0].Document.Data, `"done":"get_weather"`) {
					t.Fatalf("message %s, want a v2 tool message with a document for %s", msg, test.id)
				}
			}
			rec := p.status(wire.CallID("acme", test.rid, 0))
			var stages []string
			for _, s := range rec.History {
				stages = append(stages, s.Stage+":"+string(s.Status))
			}
			want := "accumulate:received parse:parsed validate:validated business:business_valid policy:approved execute:executed"
			if got := strings.Join(stages, " "); got != want {
				t.Fatalf("history %q, want %q", got, want)
			}
		})
	}
	if n := p.executed.Load(); n != 4 {
		t.Fatalf("executed %d times, want 4", n)
	}
}

// A Converse response the guardrail stopped never runs its call, whole or
// streamed: it is recorded as a provider error naming the withheld call.
func TestPipeline_bedrock_guardrail_intervened_never_executes(t *testing.T) {
	p := startPipeline(t)
	p.publish("bd-guard", provider.BedrockConverse, []byte(`{"output":{"message":{"role":"assistant","content":[{"text":"Sorry."},{"toolUse":{"toolUseId":"tooluse_g","name":"get_weather","input":{"city":"Paris"}}}]}},"stopReason":"guardrail_intervened","usage":{"outputTokens":9}}`))
	p.publishEvents("bd-guard-s", provider.BedrockConverse, "", [][]byte{
		[]byte(`{"contentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"tooluse_h","name":"get_weather"}}}}`),
		[]byte(`{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"city\":\"Paris\"}"}}}}`),
		[]byte(`{"contentBlockStop":{"contentBlockIndex":0}}`),
		[]byte(`{"messageStop":{"stopReason":"content_filtered"}}`),
		[]byte(`{"metadata":{"usage":{"outputTokens":9}}}`),
	})
	for _, rid := range []string{"bd-guard", "bd-guard-s"} {
		r := p.waitResults(rid, 1)[0]
		b, _ := json.Marshal(r)
		if r["ok"] == true || r["status"] == "executed" || !strings.Contains(string(b), "withheld") || !strings.Contains(string(b), "get_weather") {
			t.Fatalf("%s: result %s, want a recorded provider error naming the withheld call", rid, b)
		}
	}
	p.allSettled()
	if n := p.executed.Load(); n != 0 {
		t.Fatalf("executed %d times, want 0", n)
	}
}

// Cohere's tool_plan is the model's plan, not its text: a call written in
// the plan is never recovered, even tolerant, while the same call in the
// visible text is (the control). Bedrock reasoning content likewise.
func TestPipeline_cohere_tool_plan_and_bedrock_reasoning_are_never_recovered(t *testing.T) {
	p := startPipeline(t)
	call := `<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>`
	p.publish("co-plan", provider.Cohere, []byte(`{"id":"co-p","message":{"role":"assistant","tool_plan":"`+call+`","content":[{"type":"text","text":"I cannot help with that."}]},"finish_reason":"COMPLETE"}`),
		streams.HeaderTolerant, "true")
	p.publish("bd-reason", provider.BedrockConverse, []byte(`{"output":{"message":{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"`+call+`","signature":"s"}}},{"text":"No call needed."}]}},"stopReason":"end_turn"}`),
		streams.HeaderTolerant, "true")
	for _, rid := range []string{"co-plan", "bd-reason"} {
		if r := p.waitResults(rid, 1)[0]; r["status"] != "no_tool_calls" {
			t.Fatalf("%s: %v, want no_tool_calls", rid, r)
		}
	}
	p.publish("co-text", provider.Cohere, []byte(`{"id":"co-t","message":{"role":"assistant","content":[{"type":"text","text":"`+call+`"}]},"finish_reason":"COMPLETE"}`),
		streams.HeaderTolerant, "true")
	if r := p.waitResults("co-text", 1)[0]; r["status"] != "executed" || r["source"] != "textjson" {
		t.Fatalf("control: %v, want the call in the text recovered and executed", r)
	}
	if n := p.executed.Load(); n != 1 {
		t.Fatalf("executed %d, want 1", n)
	}
}
