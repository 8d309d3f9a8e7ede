package stage

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// interEvents is a streamed Gemini Interactions response (API revision
// 2026-05-20): a thought, text, and one function_call whose arguments come
// as two arguments_delta pieces; interaction.completed is its terminal
// event, the status_update before it is not.
func interEvents(id string) [][]byte {
	return [][]byte{
		[]byte(`{"event_type":"interaction.created","interaction":{"id":"v1_gi","status":"in_progress","object":"interaction","model":"gemini-3-flash-preview"}}`),
		[]byte(`{"event_type":"step.start","index":0,"step":{"type":"thought"}}`),
		[]byte(`{"event_type":"step.delta","index":0,"delta":{"type":"thought_signature","signature":"c2ln"}}`),
		[]byte(`{"event_type":"step.stop","index":0}`),
		[]byte(`{"event_type":"step.start","index":1,"step":{"type":"model_output"}}`),
		[]byte(`{"event_type":"step.delta","index":1,"delta":{"type":"text","text":"Checking."}}`),
		[]byte(`{"event_type":"step.stop","index":1}`),
		[]byte(`{"event_type":"step.start","index":2,"step":{"type":"function_call","id":"` + id + `","name":"get_weather","arguments":{}}}`),
		[]byte(`{"event_type":"step.delta","index":2,"delta":{"type":"arguments_delta","arguments":"{\"city\":\"Par"}}`),
		[]byte(`{"event_type":"step.delta","index":2,"delta":{"type":"arguments_delta","arguments":"is\",\"units\":\"c\"}"}}`),
		[]byte(`{"event_type":"step.stop","index":2}`),
		[]byte(`{"event_type":"interaction.status_update","interaction_id":"v1_gi","status":"requires_action"}`),
		[]byte(`{"event_type":"interaction.completed","interaction":{"id":"v1_gi","status":"requires_action","usage":{"total_output_tokens":21}}}`),
	}
}

// A Gemini Interactions response, whole and streamed, goes through every
// gate to executed once, and its result comes back on
// toolgate.results.<tenant>.<rid> as an Interactions function_result block
// answering the call's id.
func TestPipeline_gemini_interactions_execute_once_whole_and_streamed(t *testing.T) {
	p := startPipeline(t)
	for _, test := range []struct {
		name, rid, id string
		whole         []byte
		events        [][]byte
	}{
		{"whole", "gi-whole", "fc_w1", []byte(`{"id":"v1_w","object":"interaction","model":"gemini-3-flash-preview","status":"requires_action","outputs":[{"type":"thought","signature":"c2ln"},{"type":"text","text":"Checking."},{"type":"function_call","id":"fc_w1","name":"get_weather","arguments":{"city":"Paris","units":"c"}}],"usage":{"total_output_tokens":21}}`), nil},
		{"stream", "gi-stream", "fc_s1", nil, interEvents("fc_s1")},
	} {
		t.Run(test.name, func(t *testing.T) {
			if test.whole != nil {
				p.publish(test.rid, provider.GeminiInteractions, test.whole, streams.HeaderTenant, "acme")
			} else {
				p.publishEvents(test.rid, provider.GeminiInteractions, "acme", test.events)
			}
			r := p.resultOn("acme", test.rid)
			if r["status"] != "executed" || r["ok"] != true {
				t.Fatalf("result %v, want executed", r)
			}
			msg, _ := json.Marshal(r["message"])
			var m struct {
				Type    string `json:"type"`
				CallID  string `json:"call_id"`
				Name    string `json:"name"`
				Result  string `json:"result"`
				IsError *bool  `json:"is_error"`
			}
			if err := json.Unmarshal(msg, &m); err != nil || m.Type != "function_result" || m.CallID != test.id || m.Name != "get_weather" ||
				m.IsError == nil || *m.IsError || !strings.Contains(m.Result, `"done":"get_weather"`) {
				t.Fatalf("message %s, want an Interactions function_result for %s", msg, test.id)
			}
			rec := p.status(wire.CallID("acme", test.rid, 0)) // a tenant's call ids carry its key (issue 28)
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
	p.allSettled()
	if n := p.executed.Load(); n != 2 {
		t.Fatalf("executed %d times, want 2 (each response's call once)", n)
	}
}

// A stream cut before interaction.completed never executes, however whole
// its call looks: the call's step stopped and a status_update already said
// requires_action, but the terminal event never came. The producer's
// Toolgate-End makes it transport_incomplete.
func TestPipeline_gemini_interactions_cut_stream_is_transport_incomplete_never_executed(t *testing.T) {
	p := startPipeline(t)
	evs := interEvents("fc_cut")
	for _, test := range []struct {
		rid    string
		events [][]byte
	}{
		{"gi-cut-args", evs[:9]},              // inside the arguments
		{"gi-cut-terminal", evs[:len(evs)-1]}, // everything but interaction.completed
	} {
		p.publishEvents(test.rid, provider.GeminiInteractions, "", test.events)
		end := nats.NewMsg(streams.InStream(test.rid))
		end.Header.Set(streams.HeaderProvider, provider.GeminiInteractions)
		end.Header.Set(streams.HeaderResponseID, test.rid)
		end.Header.Set(streams.HeaderEnd, "connection reset")
		if _, err := p.js.PublishMsg(p.ctx, end); err != nil {
			t.Fatal(err)
		}
	}
	for _, rid := range []string{"gi-cut-args", "gi-cut-terminal"} {
		r := p.waitResults(rid, 1)[0]
		if r["status"] != "transport_incomplete" || r["ok"] == true {
			b, _ := json.Marshal(r)
			t.Fatalf("%s: result %s, want transport_incomplete", rid, b)
		}
	}
	p.allSettled()
	if n := p.executed.Load(); n != 0 {
		t.Fatalf("executed %d times, want 0", n)
	}
}
