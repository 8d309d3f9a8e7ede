package provider

import (
	"errors"
	"strings"
	"testing"
)

// Bedrock stream events used by several tests.
const (
	bdStart   = `{"contentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t1","name":"f"}}}}`
	bdArgs    = `{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"a\":1}"}}}}`
	bdStop    = `{"contentBlockStop":{"contentBlockIndex":0}}`
	bdMsgStop = `{"messageStop":{"stopReason":"tool_use"}}`
	bdMeta    = `{"metadata":{"usage":{"inputTokens":5,"outputTokens":100,"totalTokens":105},"metrics":{"latencyMs":1}}}`
)

// AWS sends messageStop, then metadata (the usage) last: the stream is done
// at metadata, and each of the two is recognizable on its own (accumulate
// probes each event alone).
func TestBedrock_stream_is_done_at_metadata_after_messageStop(t *testing.T) {
	a := feed(t, BedrockConverse, bdStart, bdArgs, bdStop, bdMsgStop)
	if a.Done() || !a.AwaitsOptional() {
		t.Fatalf("at messageStop: Done %v, AwaitsOptional %v; want waiting for metadata", a.Done(), a.AwaitsOptional())
	}
	if err := a.Add([]byte(bdMeta)); err != nil || !a.Done() || a.AwaitsOptional() {
		t.Fatalf("Add: %v, Done %v", err, a.Done())
	}
	r := a.Response()
	checkCalls(t, r, ReasonToolCalls, wantCall{"f", `{"a":1}`})
	if r.OutputTokens != 100 || r.Calls[0].ID != "t1" {
		t.Errorf("response %+v", r)
	}
	if err := a.Add([]byte(bdStart)); !errors.Is(err, ErrAfterTerminal) {
		t.Errorf("event after the end: %v, want ErrAfterTerminal", err)
	}
	for _, ev := range []string{bdMeta, bdMsgStop} {
		if probe := feed(t, BedrockConverse, ev); !probe.MayEnd() || probe.Done() {
			t.Errorf("%s alone: MayEnd %v, Done %v; want a possible end, not the end", ev, probe.MayEnd(), probe.Done())
		}
	}
	if probe := feed(t, BedrockConverse, bdStop); probe.MayEnd() {
		t.Error("contentBlockStop alone may end the stream")
	}
}

// Metadata before messageStop (vercel/ai's recorded order, issue 32: 3 of
// 10 held-out streams had their calls withheld) completes the stream at
// messageStop, with the usage known, so the cap still applies.
func TestBedrock_metadata_before_messageStop_completes_at_messageStop(t *testing.T) {
	a := feed(t, BedrockConverse, bdStart, bdArgs, bdStop, bdMeta)
	if a.Done() || a.AwaitsOptional() || !a.MayEnd() {
		t.Fatalf("at metadata: Done %v, AwaitsOptional %v", a.Done(), a.AwaitsOptional())
	}
	if err := a.Add([]byte(bdMsgStop)); err != nil || !a.Done() {
		t.Fatalf("messageStop after metadata: %v, Done %v", err, a.Done())
	}
	r := a.Response()
	checkCalls(t, r, ReasonToolCalls, wantCall{"f", `{"a":1}`})
	if r.Error != nil || !r.Complete || r.OutputTokens != 100 {
		t.Fatalf("%+v", r)
	}
	capped, _ := NewAccumulator(BedrockConverse, WithMaxTokens(100))
	for _, ev := range []string{bdStart, bdArgs, bdStop, bdMeta, bdMsgStop} {
		if err := capped.Add([]byte(ev)); err != nil {
			t.Fatal(err)
		}
	}
	if c := capped.Response().Calls[0]; !c.Truncated {
		t.Fatalf("call %+v, want truncated at the cap", c)
	}
	if err := feed(t, BedrockConverse, bdStart, bdMeta).Add([]byte(bdArgs)); err == nil {
		t.Error("a content event after metadata was accepted")
	}
}

// A stream without metadata (5 of 10 held-out vercel/ai streams) waits at
// messageStop only for an optional event: Settle completes it with its
// calls, which never hang on it. Settle does nothing to a stream that
// still lacks its messageStop.
func TestBedrock_stream_without_metadata_settles(t *testing.T) {
	a := feed(t, BedrockConverse, bdStart, bdArgs, bdStop, bdMsgStop)
	a.Settle()
	r := a.Response()
	if !a.Done() || !r.Complete || r.Error != nil {
		t.Fatalf("settled: Done %v, %+v", a.Done(), r)
	}
	checkCalls(t, r, ReasonToolCalls, wantCall{"f", `{"a":1}`})
	open := feed(t, BedrockConverse, bdStart, bdArgs, bdStop, bdMeta)
	if open.Settle(); open.Done() || open.Response().Complete {
		t.Fatal("Settle completed a stream without messageStop")
	}
}

// Output at the requested cap is known only from metadata, after
// messageStop: the calls of such a stream are truncated.
func TestBedrock_stream_output_at_the_cap_from_trailing_metadata_is_truncation(t *testing.T) {
	a, _ := NewAccumulator(BedrockConverse, WithMaxTokens(100))
	for _, ev := range []string{bdStart, bdArgs, bdStop, bdMsgStop, bdMeta} {
		if err := a.Add([]byte(ev)); err != nil {
			t.Fatal(err)
		}
	}
	if c := a.Response().Calls[0]; !c.Truncated || !strings.Contains(c.TruncatedWhy, "max tokens") {
		t.Fatalf("call %+v, want truncated at the cap", c)
	}
}

// Only metadata may follow messageStop; a content event after it, a toolUse
// delta for a block never opened or already stopped, and input that is not
// a string are refused, leaving the calls as they were.
func TestBedrock_stream_out_of_order_events_are_refused(t *testing.T) {
	for name, test := range map[string]struct {
		before []string
		bad    string
	}{
		"delta after messageStop":          {[]string{bdStart, bdArgs, bdStop, bdMsgStop}, `{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"x"}}}`},
		"input for an unopened block":      {[]string{bdStart}, `{"contentBlockDelta":{"contentBlockIndex":3,"delta":{"toolUse":{"input":"{}"}}}}`},
		"input after contentBlockStop":     {[]string{bdStart, bdArgs, bdStop}, bdArgs},
		"input as an object":               {[]string{bdStart}, `{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":{"a":1}}}}}`},
		"block started twice":              {[]string{bdStart}, bdStart},
		"two members in one event":         {[]string{bdStart}, `{"contentBlockStop":{"contentBlockIndex":0},"messageStop":{"stopReason":"end_turn"}}`},
		"unwrapped event":                  {nil, `{"contentBlockIndex":0,"delta":{"text":"x"}}`},
		"messageStop without stopReason":   {[]string{bdStart}, `{"messageStop":{}}`},
		"messageStop with stopReason \"\"": {[]string{bdStart}, `{"messageStop":{"stopReason":""}}`},
		"delta without index":              {[]string{bdStart}, `{"contentBlockDelta":{"delta":{"text":"x"}}}`},
		"metadata after the end":           {[]string{bdStart, bdMsgStop, bdMeta}, bdMeta},
	} {
		t.Run(name, func(t *testing.T) {
			a := feed(t, BedrockConverse, test.before...)
			before := a.Response()
			if err := a.Add([]byte(test.bad)); err == nil {
				t.Fatalf("%s accepted", test.bad)
			}
			if after := a.Response(); after.Complete != before.Complete || len(after.Calls) != len(before.Calls) ||
				len(after.Calls) > 0 && after.Calls[0].Arguments != before.Calls[0].Arguments {
				t.Fatalf("refused event changed the response: %+v -> %+v", before, after)
			}
		})
	}
}

// guardrail_intervened and content_filtered never pass a call on: the calls
// are withheld and named in a provider error, whole and streamed; the
// assistant's text is kept.
func TestBedrock_guardrail_withholds_the_calls(t *testing.T) {
	for _, reason := range []string{"guardrail_intervened", "content_filtered"} {
		r, err := ParseResponse(BedrockConverse, []byte(`{"output":{"message":{"role":"assistant","content":[{"text":"Sorry."},{"toolUse":{"toolUseId":"t","name":"delete_account","input":{"id":1}}}]}},"stopReason":"`+reason+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		s := feed(t, BedrockConverse, bdStart, bdArgs, bdStop, `{"messageStop":{"stopReason":"`+reason+`"}}`, bdMeta).Response()
		for _, r := range []Response{r, s} {
			if len(r.Calls) != 0 || r.Error == nil || r.Error.Type != reason || r.ProviderFinish != reason || !r.Complete {
				t.Fatalf("%s: %+v, want no calls and a provider error", reason, r)
			}
		}
		if r.Text != "Sorry." || !strings.Contains(r.Error.Message, "delete_account") {
			t.Errorf("%s: text %q, error %q", reason, r.Text, r.Error.Message)
		}
	}
	r, _ := ParseResponse(BedrockConverse, []byte(`{"output":{"message":{"content":[{"text":"No."}]}},"stopReason":"content_filtered"}`))
	if r.Finish != ReasonContentFilter || r.Error != nil {
		t.Errorf("a filtered response without calls: %+v, want content_filter", r)
	}
}

func TestBedrock_stop_reasons(t *testing.T) {
	for w, want := range map[string]Reason{
		"end_turn": ReasonStop, "stop_sequence": ReasonStop, "tool_use": ReasonToolCalls, "max_tokens": ReasonLength,
		"model_context_window_exceeded": ReasonLength, "malformed_tool_use": ReasonError, "malformed_model_output": ReasonError,
		"guardrail_intervened": ReasonContentFilter, "content_filtered": ReasonContentFilter, "future_reason": ReasonUnknown,
	} {
		r, err := ParseResponse(BedrockConverse, []byte(`{"output":{"message":{"content":[{"text":"x"}]}},"stopReason":"`+w+`"}`))
		if err != nil || r.Finish != want || r.ProviderFinish != w {
			t.Errorf("%s: %s %v, want %s", w, r.Finish, err, want)
		}
	}
	r, err := ParseResponse(BedrockConverse, []byte(`{"message":"The security token included in the request is invalid.","__type":"UnrecognizedClientException"}`))
	if err != nil || r.Error == nil || r.Error.Type != "UnrecognizedClientException" || r.Finish != ReasonError {
		t.Errorf("error body: %+v %v", r, err)
	}
}

// Keys match exactly: "ToolUseId"/"Name" are not toolUseId/name, and a key
// named twice refuses the body or event.
func TestBedrock_keys_are_exact_and_duplicates_refused(t *testing.T) {
	r, err := ParseResponse(BedrockConverse, []byte(`{"output":{"message":{"content":[{"toolUse":{"toolUseId":"a","name":"get_weather","Name":"delete_customer_account","input":{}}}]}},"stopReason":"tool_use"}`))
	if err != nil || len(r.Calls) != 1 || r.Calls[0].Name != "get_weather" {
		t.Fatalf("%+v %v", r.Calls, err)
	}
	if _, err := ParseResponse(BedrockConverse, []byte(`{"output":{"message":{"content":[{"toolUse":{"toolUseId":"a","name":"get_weather","name":"delete_customer_account","input":{}}}]}},"stopReason":"tool_use"}`)); !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("duplicate name: %v", err)
	}
	a, _ := NewAccumulator(BedrockConverse)
	if err := a.Add([]byte(`{"contentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"a","name":"get_weather","name":"x"}}}}`)); !errors.Is(err, ErrDuplicateKey) || len(a.Response().Calls) != 0 {
		t.Errorf("duplicate name in a stream event: %v", err)
	}
	if err := a.Add([]byte(`{"ContentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"a","name":"f"}}}}`)); err == nil {
		t.Error("ContentBlockStart taken for contentBlockStart")
	}
}

// toolResult is the Converse toolResult block: json for an object result,
// text otherwise, status error for a failure.
func TestBedrock_tool_result_is_a_converse_toolResult_block(t *testing.T) {
	for _, test := range []struct {
		a    Answer
		want string
	}{
		{Answer{ID: "t1", Text: "ran", OK: true, Result: []byte(` {"temp":21} `)}, `{"toolResult":{"toolUseId":"t1","content":[{"json":{"temp":21}}],"status":"success"}}`},
		{Answer{ID: "t1", Text: "ran: [1,2]", OK: true, Result: []byte(`[1,2]`)}, `{"toolResult":{"toolUseId":"t1","content":[{"text":"ran: [1,2]"}],"status":"success"}}`},
		{Answer{ID: "t1", Text: "dry run <ok>", OK: true, Result: []byte(`{"a":1}`), TextOnly: true}, `{"toolResult":{"toolUseId":"t1","content":[{"text":"dry run <ok>"}],"status":"success"}}`},
		{Answer{ID: "t1", Text: "failed: no such customer"}, `{"toolResult":{"toolUseId":"t1","content":[{"text":"failed: no such customer"}],"status":"error"}}`},
	} {
		got, err := ToolResult(BedrockConverse, test.a)
		if err != nil || string(got) != test.want {
			t.Errorf("got %s %v\nwant %s", got, err, test.want)
		}
	}
	if _, err := ToolResult(BedrockConverse, Answer{Text: "x"}); !errors.Is(err, ErrNoCallID) {
		t.Errorf("without id: %v", err)
	}
}

// Garbage between valid events is refused and leaves the accumulator usable.
func TestBedrock_garbage_between_events_is_refused(t *testing.T) {
	a, _ := NewAccumulator(BedrockConverse)
	for _, ev := range []string{bdStart, bdArgs, bdStop, bdMsgStop, bdMeta} {
		for _, g := range garbage {
			if err := a.Add([]byte(g)); err == nil {
				t.Errorf("garbage %q accepted", g)
			}
		}
		if err := a.Add([]byte(ev)); err != nil {
			t.Fatalf("valid event after garbage: %v", err)
		}
	}
	checkCalls(t, a.Response(), ReasonToolCalls, wantCall{"f", `{"a":1}`})
}

// A server_tool_use block runs on Bedrock's side: it is not a client call,
// whole or streamed; reasoning content is not text.
func TestBedrock_server_tool_use_and_reasoning_are_not_client_calls_or_text(t *testing.T) {
	r, err := ParseResponse(BedrockConverse, []byte(`{"output":{"message":{"content":[{"reasoningContent":{"reasoningText":{"text":"call f","signature":"s"}}},`+
		`{"toolUse":{"toolUseId":"s1","name":"nova_grounding","type":"server_tool_use","input":{"q":"x"}}},{"toolResult":{"toolUseId":"s1","content":[{"text":"r"}]}},`+
		`{"text":"Answer."},{"toolUse":{"toolUseId":"c1","name":"f","input":{"a":1}}}]}},"stopReason":"tool_use"}`))
	if err != nil {
		t.Fatal(err)
	}
	checkCalls(t, r, ReasonToolCalls, wantCall{"f", `{"a":1}`})
	if r.Text != "Answer." {
		t.Errorf("text %q", r.Text)
	}
	s := feed(t, BedrockConverse,
		`{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"call f"}}}}`,
		`{"contentBlockStart":{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"s1","name":"nova_grounding","type":"server_tool_use"}}}}`,
		`{"contentBlockDelta":{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"q\":\"x\"}"}}}}`,
		`{"contentBlockStop":{"contentBlockIndex":1}}`,
		`{"contentBlockStart":{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"c1","name":"f"}}}}`,
		`{"contentBlockDelta":{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{\"a\":1}"}}}}`,
		`{"contentBlockStop":{"contentBlockIndex":2}}`, bdMsgStop, bdMeta).Response()
	checkCalls(t, s, ReasonToolCalls, wantCall{"f", `{"a":1}`})
	if s.Text != "" {
		t.Errorf("stream text %q", s.Text)
	}
}
