package provider

import (
	"strings"
	"testing"
)

func TestGemini_fixtures(t *testing.T) {
	for _, test := range []struct {
		file     string
		finish   Reason
		provider string
		calls    []wantCall
	}{
		{"gemini-2.0-flash-tool-call-enum-int.json", ReasonToolCalls, "1", []wantCall{{"calculate", `{"expression":"15 * 7"}`}}},
		{"gemini-2.0-flash-tool-call.stream.sse", ReasonToolCalls, "STOP", []wantCall{{"get_capital", `{"country":"France"}`}}},
		{"gemini-3-pro-empty-args-thought-signature.stream.sse", ReasonToolCalls, "STOP", []wantCall{{"get_country", `{}`}}},
		{"gemini-2.5-flash-finish-max-tokens.json", ReasonLength, "MAX_TOKENS", nil},
		{"gemini-3.1-pro-streaming-partial-args.chunks.jsonl", ReasonToolCalls, "STOP", []wantCall{
			{"getWeather", `{"location":"Boston"}`}, {"getWeather", `{"location":"San Francisco"}`}}},
		{"gemini-3-flash-parallel-no-args-partial-args.chunks.jsonl", ReasonToolCalls, "STOP", []wantCall{
			{"read_theme", `{}`}, {"read_screen", `{"id":"A"}`}, {"read_screen", `{"id":"B"}`}, {"read_screen", `{"id":"C"}`}}},
		{"gemini-array-args-missing-terminal-functioncall.chunks.jsonl", ReasonToolCalls, "STOP", []wantCall{{"writeItems",
			`{"operations":[{"action":"add","description":"Fresh red apple","itemid":"apple_001","price":0.5},{"action":"add","description":"Ripe yellow banana","itemid":"banana_001","price":0.3}]}`}}},
	} {
		t.Run(test.file, func(t *testing.T) {
			r := fixtureResponses(t, Gemini, test.file)[0]
			checkCalls(t, r, test.finish, test.calls...)
			if r.ProviderFinish != test.provider {
				t.Errorf("ProviderFinish %q, want %q", r.ProviderFinish, test.provider)
			}
		})
	}
}

func TestGemini_nested_partial_args_join_strings_and_keep_non_ascii(t *testing.T) {
	r := fixtureResponses(t, Gemini, "gemini-vertex-nested-partial-args.chunks.jsonl")[0]
	args := r.Calls[0].Arguments
	for _, want := range []string{`"Preheat oven to 375°F (190°C)."`, `"Cook lasagna noodles according to package directions, drain and set aside."`,
		`"In a 9x13 baking dish, spread a thin layer of meat sauce."`, `{"amount":"1/2 tsp","name":"Pepper"}]`} {
		if !strings.Contains(args, want) {
			t.Errorf("arguments lack %s:\n%s", want, args)
		}
	}
}

func TestGemini_finish_reasons(t *testing.T) {
	for _, test := range []struct {
		word string
		want Reason
	}{{`"SAFETY"`, ReasonContentFilter}, {`3`, ReasonContentFilter}, {`"MALFORMED_FUNCTION_CALL"`, ReasonError}, {`9`, ReasonError},
		{`2`, ReasonLength}, {`"RECITATION"`, ReasonContentFilter}, {`"OTHER"`, ReasonUnknown}, {`99`, ReasonUnknown}} {
		r, err := ParseResponse(Gemini, []byte(`{"candidates":[{"content":{"parts":[{"text":"x"}]},"finishReason":`+test.word+`}]}`))
		if err != nil || r.Finish != test.want {
			t.Errorf("%s: %s %v", test.word, r.Finish, err)
		}
	}
}

func TestGemini_open_partial_call_at_finish_is_truncated(t *testing.T) {
	a := feed(t, Gemini,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.a","stringValue":"x","willContinue":true}],"willContinue":true}}]}}]}`)
	if a.Done() {
		t.Fatal("done before finishReason")
	}
	if p := a.Progress(); len(p) != 1 || p[0].Name != "f" || p[0].ArgumentBytes != 1 {
		t.Errorf("progress %+v", p)
	}
	if err := a.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":""}]},"finishReason":"MAX_TOKENS"}],"usageMetadata":{"candidatesTokenCount":8}}`)); err != nil {
		t.Fatal(err)
	}
	r := a.Response()
	checkCalls(t, r, ReasonLength, wantCall{"f", `{"a":"x"}`})
	if !r.Calls[0].Truncated {
		t.Error("not truncated")
	}
}

func TestGemini_thoughts_are_not_text_and_array_body_is_chunks(t *testing.T) {
	r, err := ParseResponse(Gemini, []byte(`[{"candidates":[{"content":{"parts":[{"text":"plan","thought":true},{"text":"Hello"}]}}]},
		{"candidates":[{"content":{"parts":[{"functionCall":{"id":"c1","name":"f","args":{"z":1,"a":[true,null]}}}]},"finishReason":"STOP"}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	checkCalls(t, r, ReasonToolCalls, wantCall{"f", `{"a":[true,null],"z":1}`})
	if r.Text != "Hello" || r.Calls[0].ID != "c1" {
		t.Errorf("text %q id %q", r.Text, r.Calls[0].ID)
	}
}

func TestGemini_prompt_blocked_is_content_filter(t *testing.T) {
	r, err := ParseResponse(Gemini, []byte(`{"promptFeedback":{"blockReason":"SAFETY"}}`))
	if err != nil || r.Finish != ReasonContentFilter || r.ProviderFinish != "SAFETY" {
		t.Errorf("%+v %v", r, err)
	}
}

func TestSplitJSONPath(t *testing.T) {
	segs, err := splitJSONPath(`$.a[2]['b c'].d`)
	if err != nil || len(segs) != 4 || segs[0].key != "a" || !segs[1].isIdx || segs[1].index != 2 || segs[2].key != "b c" || segs[3].key != "d" {
		t.Errorf("%+v %v", segs, err)
	}
	for _, bad := range []string{"", "a", "$", "$.", "$[x]", "$[1", "$[-1]", "$[99999999]", "$..a", "$a"} {
		if _, err := splitJSONPath(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestGemini_contradicting_partial_path_takes_the_later_fragment(t *testing.T) {
	a := feed(t, Gemini,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.a","stringValue":"x"},{"jsonPath":"$.a[1].b","boolValue":true},{"jsonPath":"$.n","numberValue":1e3}]}}]},"finishReason":"STOP"}]}`)
	checkCalls(t, a.Response(), ReasonToolCalls, wantCall{"f", `{"a":[null,{"b":true}],"n":1e3}`})
}
