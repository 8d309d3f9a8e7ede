package provider

import (
	"errors"
	"testing"
)

const (
	coStart = `{"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":{"id":"c1","type":"function","function":{"name":"f","arguments":""}}}}}`
	coArgs  = `{"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":"{\"a\":1}"}}}}}`
	coEnd   = `{"type":"tool-call-end","index":0}`
	coDone  = `{"type":"message-end","delta":{"finish_reason":"TOOL_CALL","usage":{"billed_units":{"output_tokens":7},"tokens":{"output_tokens":9}}}}`
)

// tool_plan, whole or streamed, is not text: a call written in the plan is
// never a source of text-recovered calls. Thinking content is not text
// either; text content is.
func TestCohere_tool_plan_and_thinking_are_not_text(t *testing.T) {
	plan := `I will call {\"name\": \"create_invoice\", \"parameters\": {\"customer_id\": \"cus_1\"}}`
	r, err := ParseResponse(Cohere, []byte(`{"id":"r","message":{"role":"assistant","tool_plan":"`+plan+`","content":[{"type":"thinking","thinking":"call create_invoice"},{"type":"text","text":"Done."}]},"finish_reason":"COMPLETE"}`))
	if err != nil || r.Text != "Done." || len(r.Calls) != 0 || r.Finish != ReasonStop {
		t.Fatalf("%+v %v", r, err)
	}
	s := feed(t, Cohere, `{"type":"message-start","id":"r","delta":{"message":{"role":"assistant","content":[],"tool_plan":"","tool_calls":[],"citations":[]}}}`,
		`{"type":"tool-plan-delta","delta":{"message":{"tool_plan":"`+plan+`"}}}`,
		`{"type":"content-start","index":0,"delta":{"message":{"content":{"type":"thinking","thinking":""}}}}`,
		`{"type":"content-delta","index":0,"delta":{"message":{"content":{"thinking":"create_invoice(customer_id='cus_1')"}}}}`,
		`{"type":"content-end","index":0}`,
		`{"type":"content-start","index":1,"delta":{"message":{"content":{"type":"text","text":""}}}}`,
		`{"type":"content-delta","index":1,"delta":{"message":{"content":{"text":"Done."}}}}`,
		`{"type":"message-end","delta":{"finish_reason":"COMPLETE"}}`).Response()
	if s.Text != "Done." || s.ID != "r" || !s.Complete {
		t.Fatalf("stream %+v", s)
	}
}

func TestCohere_stream_calls_and_terminal_event(t *testing.T) {
	a := feed(t, Cohere, coStart, coArgs, coEnd)
	if a.Done() {
		t.Fatal("done before message-end")
	}
	if err := a.Add([]byte(coDone)); err != nil || !a.Done() {
		t.Fatal(err)
	}
	r := a.Response()
	checkCalls(t, r, ReasonToolCalls, wantCall{"f", `{"a":1}`})
	if r.OutputTokens != 9 || r.Calls[0].ID != "c1" {
		t.Errorf("%+v", r)
	}
	if err := a.Add([]byte(coStart)); !errors.Is(err, ErrAfterTerminal) {
		t.Errorf("after message-end: %v", err)
	}
}

// Deltas for a call never started or already ended, a second start, a
// start without its object, an unknown event type and non-string
// arguments are refused and change nothing.
func TestCohere_stream_out_of_order_events_are_refused(t *testing.T) {
	for name, test := range map[string]struct {
		before []string
		bad    string
	}{
		"delta for an unstarted call":   {nil, coArgs},
		"delta after tool-call-end":     {[]string{coStart, coEnd}, coArgs},
		"start twice":                   {[]string{coStart}, coStart},
		"start without tool_calls":      {nil, `{"type":"tool-call-start","index":0,"delta":{"message":{}}}`},
		"start with a tool_calls array": {nil, `{"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":[{"id":"c"}]}}}`},
		"start without index":           {nil, `{"type":"tool-call-start","delta":{"message":{"tool_calls":{"id":"c","function":{"name":"f"}}}}}`},
		"object arguments":              {[]string{coStart}, `{"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":{"arguments":{"a":1}}}}}}`},
		"unknown type":                  {nil, `{"type":"tool-call-begin","index":0}`},
		"Type in the wrong case":        {nil, `{"Type":"message-end"}`},
	} {
		t.Run(name, func(t *testing.T) {
			a := feed(t, Cohere, test.before...)
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

func TestCohere_finish_reasons(t *testing.T) {
	for w, want := range map[string]Reason{
		"COMPLETE": ReasonStop, "STOP_SEQUENCE": ReasonStop, "TOOL_CALL": ReasonToolCalls, "MAX_TOKENS": ReasonLength,
		"ERROR": ReasonError, "TIMEOUT": ReasonError, "complete": ReasonUnknown,
	} {
		r, err := ParseResponse(Cohere, []byte(`{"id":"r","message":{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"`+w+`"}`))
		if err != nil || r.Finish != want || r.ProviderFinish != w {
			t.Errorf("%s: %s %v, want %s", w, r.Finish, err, want)
		}
		if cut := w == "MAX_TOKENS" || w == "ERROR" || w == "TIMEOUT"; r.Calls[0].Truncated != cut {
			t.Errorf("%s: call truncated %v, want %v", w, r.Calls[0].Truncated, cut)
		}
	}
	r, err := ParseResponse(Cohere, []byte(`{"id":"e","message":"invalid request: model 'x' not found"}`))
	if err != nil || r.Error == nil || r.Finish != ReasonError {
		t.Errorf("error body: %+v %v", r, err)
	}
	s := feed(t, Cohere, coStart, `{"type":"message-end","delta":{"error":"internal error","finish_reason":"ERROR"}}`).Response()
	if s.Error == nil || s.Error.Message != "internal error" || !s.Complete || !s.Calls[0].Truncated {
		t.Errorf("stream error: %+v", s)
	}
}

func TestCohere_keys_are_exact_and_duplicates_refused(t *testing.T) {
	r, err := ParseResponse(Cohere, []byte(`{"message":{"tool_calls":[{"id":"a","function":{"name":"get_weather","Name":"delete_customer_account","arguments":"{}"}}]},"finish_reason":"TOOL_CALL"}`))
	if err != nil || len(r.Calls) != 1 || r.Calls[0].Name != "get_weather" {
		t.Fatalf("%+v %v", r.Calls, err)
	}
	if _, err := ParseResponse(Cohere, []byte(`{"message":{"tool_calls":[{"id":"a","function":{"name":"get_weather","name":"delete_customer_account","arguments":"{}"}}]},"finish_reason":"TOOL_CALL"}`)); !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("duplicate: %v", err)
	}
	a, _ := NewAccumulator(Cohere)
	if err := a.Add([]byte(`{"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":{"id":"a","function":{"name":"get_weather","name":"x"}}}}}`)); !errors.Is(err, ErrDuplicateKey) || len(a.Response().Calls) != 0 {
		t.Errorf("duplicate in a stream event: %v", err)
	}
}

// The result goes back as a v2 tool message with a document: the result's
// JSON when the call ran, the outcome text otherwise.
func TestCohere_tool_result_is_a_v2_tool_message(t *testing.T) {
	for _, test := range []struct {
		a    Answer
		want string
	}{
		{Answer{ID: "c1", Text: "ran", OK: true, Result: []byte(`{"temp":21}`)}, `{"role":"tool","tool_call_id":"c1","content":[{"type":"document","document":{"data":"{\"temp\":21}"}}]}`},
		{Answer{ID: "c1", Text: "failed: <no> customer"}, `{"role":"tool","tool_call_id":"c1","content":[{"type":"document","document":{"data":"failed: <no> customer"}}]}`},
		{Answer{ID: "c1", Text: "dry run", OK: true, Result: []byte(`{"a":1}`), TextOnly: true}, `{"role":"tool","tool_call_id":"c1","content":[{"type":"document","document":{"data":"dry run"}}]}`},
	} {
		got, err := ToolResult(Cohere, test.a)
		if err != nil || string(got) != test.want {
			t.Errorf("got %s %v\nwant %s", got, err, test.want)
		}
	}
	if _, err := ToolResult(Cohere, Answer{}); !errors.Is(err, ErrNoCallID) {
		t.Errorf("without id: %v", err)
	}
}

func TestCohere_garbage_between_events_is_refused(t *testing.T) {
	a, _ := NewAccumulator(Cohere)
	for _, ev := range []string{coStart, coArgs, coEnd, coDone} {
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

// No byte prefix of a whole fixture of the two providers parses as a
// response, and no byte prefix of a transcript yields a complete one.
func TestBedrockCohere_no_prefix_of_a_fixture_is_complete(t *testing.T) {
	n := 0
	for _, f := range loadFixtures(t) {
		if f.provider != BedrockConverse && f.provider != Cohere {
			continue
		}
		end := len(trimSpace(f.data))
		if isEventStream(f.data) {
			end = len(f.data) // binary: its last bytes are a CRC, not padding
		}
		for cut := 0; cut < end; cut++ {
			data := f.data[:cut]
			n++
			if !f.streamed() {
				if r, err := ParseResponse(f.provider, data); err == nil {
					t.Fatalf("%s cut at %d parsed: %+v", f.name, cut, r)
				}
				continue
			}
			events, err := SplitTranscript(data)
			if err != nil {
				continue
			}
			a, _ := NewAccumulator(f.provider)
			for _, ev := range events {
				if a.Add(ev) != nil {
					break
				}
			}
			if a.Done() {
				t.Fatalf("%s cut at byte %d of %d is complete", f.name, cut, len(f.data))
			}
		}
	}
	if n < 1000 {
		t.Errorf("only %d prefixes tried", n)
	}
}
