package provider

import (
	"errors"
	"strings"
	"testing"
)

func TestOpenAIChat_fixtures(t *testing.T) {
	for _, test := range []struct {
		file   string
		finish Reason
		calls  []wantCall
	}{
		{"openai-gpt-4o-parallel-tool-calls.stream.sse", ReasonToolCalls, []wantCall{
			{"GetWeatherArgs", `{"city": "Edinburgh", "country": "GB", "units": "c"}`},
			{"get_stock_price", `{"ticker": "AAPL", "exchange": "NASDAQ"}`}}},
		{"anthropic-openai-compat-tool-call-index1.sse", ReasonToolCalls, []wantCall{{"read_file", `{"path": "a.txt"}`}}},
		{"mistral-small-tool-call.chunks.jsonl", ReasonToolCalls, []wantCall{{"weather", `{"location": "San Francisco"}`}}},
		{"mistral-api-glm-incremental-tool-call.chunks.jsonl", ReasonToolCalls, []wantCall{{"webSearchTool", `{"query": "current Berlin weather"}`}}},
		{"alibaba-qwen3-max-tool-call.chunks.jsonl", ReasonToolCalls, []wantCall{{"weather", `{"location": "San Francisco"}`}}},
		{"deepseek-v4-flash-parallel-empty-args.json", ReasonToolCalls, []wantCall{{"get_player_name", `{}`}, {"roll_dice", `{}`}}},
		{"openai-gpt-4o-finish-length.stream.sse", ReasonLength, nil},
		{"huggingface-deepseek-r1-finish-length-empty-tool-calls.json", ReasonLength, nil},
	} {
		t.Run(test.file, func(t *testing.T) {
			checkCalls(t, fixtureResponses(t, OpenAIChat, test.file)[0], test.finish, test.calls...)
		})
	}
}

func TestOpenAIChat_tool_use_failed_keeps_failed_generation(t *testing.T) {
	for _, file := range []string{"groq-gpt-oss-120b-tool-use-failed.error.json", "groq-gpt-oss-120b-tool-use-failed.stream.sse"} {
		r := fixtureResponses(t, OpenAIChat, file)[0]
		if r.Finish != ReasonError || r.Error == nil || r.Error.Code != "tool_use_failed" ||
			!strings.Contains(r.Error.FailedGeneration, `"name": "get_something_by_name"`) || !r.Complete {
			t.Errorf("%s: %+v error %+v", file, r, r.Error)
		}
	}
}

func TestOpenAIChat_stream_quirks(t *testing.T) {
	t.Run("interleaved parallel deltas by index", func(t *testing.T) {
		a := feed(t, OpenAIChat,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"{\"y\""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\":"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":":2}"}},{"index":0,"function":{"arguments":"1}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`)
		checkCalls(t, a.Response(), ReasonToolCalls, wantCall{"f", `{"x":1}`}, wantCall{"g", `{"y":2}`})
	})
	t.Run("duplicate index deltas in one chunk and missing id later", func(t *testing.T) {
		a := feed(t, OpenAIChat,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":""}},{"index":0,"function":{"arguments":"{\"q\":"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"","function":{"name":"","arguments":"\"é\"}"}}]}}]}`,
			`[DONE]`)
		r := a.Response()
		checkCalls(t, r, ReasonUnknown, wantCall{"f", `{"q":"é"}`})
		if r.Calls[0].ID != "a" || !r.Complete {
			t.Errorf("id %q complete %v", r.Calls[0].ID, r.Complete)
		}
	})
	t.Run("reused index with a new id starts a new call", func(t *testing.T) {
		a := feed(t, OpenAIChat,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`)
		checkCalls(t, a.Response(), ReasonToolCalls, wantCall{"f", `{}`}, wantCall{"g", `{}`})
	})
	t.Run("only choice 0 is read", func(t *testing.T) {
		a := feed(t, OpenAIChat,
			`{"choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"id":"z","function":{"name":"other","arguments":"{}"}}]}},{"index":0,"delta":{"content":"hi"}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		r := a.Response()
		checkCalls(t, r, ReasonStop)
		if r.Text != "hi" {
			t.Errorf("text %q", r.Text)
		}
	})
}

func TestOpenAIChat_hidden_truncation(t *testing.T) {
	body := `{"id":"x","choices":[{"index":0,"message":{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"a\":[1,2"}}]},"finish_reason":"tool_calls"}],"usage":{"completion_tokens":50}}`
	r, err := ParseResponse(OpenAIChat, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Calls[0]; r.Finish != ReasonToolCalls || !c.Truncated || !strings.Contains(c.TruncatedWhy, "JSON closes") {
		t.Errorf("unclosed arguments: finish %s call %+v", r.Finish, c)
	}
	closed := strings.Replace(body, `[1,2"`, `[1,2]}"`, 1)
	r, _ = ParseResponse(OpenAIChat, []byte(closed), WithMaxTokens(50))
	if c := r.Calls[0]; !c.Truncated || !strings.Contains(c.TruncatedWhy, "max tokens") || r.MaxTokens != 50 {
		t.Errorf("usage at cap: %+v", c)
	}
	r, _ = ParseResponse(OpenAIChat, []byte(closed), WithMaxTokens(51))
	if r.Calls[0].Truncated {
		t.Errorf("usage under cap marked truncated: %+v", r.Calls[0])
	}
	invalid := strings.Replace(body, `[1,2"`, `[1,2}}"`, 1)
	r, _ = ParseResponse(OpenAIChat, []byte(invalid))
	if r.Calls[0].Truncated {
		t.Error("malformed (not cut) arguments marked truncated; that is invalid_json for the parse gate")
	}
}

func TestOpenAIChat_stop_with_calls_is_tool_calls_and_keeps_provider_word(t *testing.T) {
	r, err := ParseResponse(OpenAIChat, []byte(`{"choices":[{"index":0,"message":{"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]},"finish_reason":"stop"}]}`))
	if err != nil || r.Finish != ReasonToolCalls || r.ProviderFinish != "stop" {
		t.Errorf("%+v %v", r, err)
	}
}

func TestOpenAIChat_content_after_finish_is_rejected_and_accumulator_stays_usable(t *testing.T) {
	a := feed(t, OpenAIChat,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`)
	err := a.Add([]byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}`))
	if !errors.Is(err, ErrAfterTerminal) {
		t.Fatalf("err = %v", err)
	}
	if err := a.Add([]byte(`{"choices":[],"usage":{"completion_tokens":9}}`)); err != nil {
		t.Fatalf("usage chunk after finish: %v", err)
	}
	if err := a.Add([]byte(`[DONE]`)); err != nil {
		t.Fatal(err)
	}
	r := a.Response()
	checkCalls(t, r, ReasonToolCalls, wantCall{"f", `{}`})
	if r.OutputTokens != 9 {
		t.Errorf("output tokens %d", r.OutputTokens)
	}
}
