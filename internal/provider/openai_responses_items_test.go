package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/parse"
)

// Before: every one of these items vanished (0 calls, finish stop).
func TestOpenAIResponses_client_items_are_calls_of_their_kind(t *testing.T) {
	for _, test := range []struct {
		file, kind, id, args string
	}{
		{"gpt-5-codex-local-shell-call.json", KindLocalShell, "call_XWgeTylovOiS8xLNz2TONOgO", `{"command":["ls"],"env":{},"type":"exec","working_directory":"/root"}`},
		{"gpt-5-codex-local-shell-call.chunks.jsonl", KindLocalShell, "call_h3nm8hUG0KO9tVNuRACkL1ri", `{"command":["ls","-a","~"],"env":{},"type":"exec"}`},
		{"gpt-5.1-shell-call.chunks.jsonl", KindShell, "call_pbxjNs1tMJUahLZKAS9qLtvw", `{"commands":["ls -a ~/Desktop"],"max_output_length":8912,"timeout_ms":null}`},
		{"gpt-5.1-apply-patch-call.chunks.jsonl", KindApplyPatch, "call_kA46f91ZwocQyMCKyyZqRyC5", `{"diff":"+## Shopping Checklist\n+\n+- [ ] Milk\n+- [ ] Bread\n+- [ ] Eggs\n+- [ ] Fresh fruit\n+- [ ] Coffee\n","path":"shopping-checklist.md","type":"create_file"}`},
		{"computer-use-preview-computer-call-docs.json", KindComputer, "call_zw3_docs_example", `{"action":{"button":"left","type":"click","x":156,"y":50},"pending_safety_checks":[]}`},
		{"computer-call-batched-actions-safety-check.chunks.jsonl", KindComputer, "call_cu_batch_1", `{"actions":[{"keys":["CTRL","L"],"type":"keypress"},{"text":"openai.com","type":"type"},{"type":"wait"}],"pending_safety_checks":[{"code":"malicious_instructions","id":"cu_sc_1","message":"Hostile page instruction detected."}]}`},
		{"gpt-5-mini-mcp-approval-request.chunks.jsonl", KindMCPApproval, "mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe", `{"arguments":{"alias":"","description":"Shortened link for ai-sdk.dev","max_clicks":100,"password":"","url":"https://ai-sdk.dev/"},"name":"create_short_url","server_label":"zip1"}`},
		{"gpt-5.4-client-tool-search-call.json", KindToolSearch, "call_AEvXZ1rvYpxHh8QZb7wGlTGH", `{"goal":"Find a tool to get current weather for San Francisco"}`},
		{"unknown-future-foo-call.json", "foo_call", "call_foo_1", `{"action":{"level":3,"type":"frobnicate"},"call_id":"call_foo_1","id":"foo_1","status":"completed","type":"foo_call"}`},
	} {
		t.Run(test.file, func(t *testing.T) {
			r := localFixture(t, OpenAIResponses, test.file)[0]
			checkCalls(t, r, ReasonToolCalls, wantCall{test.kind, test.args})
			c := r.Calls[0]
			if c.Kind != test.kind || c.ID != test.id || !c.ArgumentsWereObject || c.Truncated || !r.Complete {
				t.Errorf("call %+v, want kind %s id %s, complete and not truncated", c, test.kind, test.id)
			}
			if _, _, perr := parse.Strict([]byte(c.Arguments), parse.Limits{}); perr != nil {
				t.Errorf("arguments do not parse: %v", perr)
			}
		})
	}
}

// Items the provider ran itself, or answered inside the same response, ask
// nothing of the client: running them again would run them twice.
func TestOpenAIResponses_provider_run_and_answered_items_are_not_calls(t *testing.T) {
	for _, file := range []string{"gpt-5.2-hosted-shell-call-answered-in-container.json", "gpt-5-mini-mcp-approval-answered-by-mcp-call.json"} {
		r := localFixture(t, OpenAIResponses, file)[0]
		checkCalls(t, r, ReasonStop)
	}
	for _, body := range []string{
		`{"status":"completed","output":[{"type":"web_search_call","id":"ws","status":"completed"},{"type":"x_search_call","id":"xs","call_id":"c2"},{"type":"code_interpreter_call","id":"ci"},{"type":"image_generation_call","id":"ig"},{"type":"file_search_call","id":"fs"},{"type":"tool_search_call","id":"ts","call_id":"c3","execution":"server","arguments":{}},{"type":"compaction","id":"cmp"},{"type":"program","id":"p","call_id":"c4","code":"x"}]}`,
		`{"status":"completed","output":[{"type":"local_shell_call","id":"l","call_id":"c1","status":"completed","action":{"type":"exec","command":["ls"],"env":{}}},{"type":"local_shell_call_output","call_id":"c1","output":"a"}]}`,
	} {
		r, err := ParseResponse(OpenAIResponses, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		checkCalls(t, r, ReasonStop)
	}
	// A stream whose shell call is answered later in it: the draft goes.
	a := feed(t, OpenAIResponses,
		`{"type":"response.output_item.done","output_index":0,"item":{"type":"shell_call","id":"sh","call_id":"c1","status":"completed","action":{"commands":["ls"]}}}`,
		`{"type":"response.output_item.done","output_index":1,"item":{"type":"shell_call_output","id":"sho","call_id":"c1","output":[]}}`,
		`{"type":"response.output_item.done","output_index":2,"item":{"type":"function_call","id":"fc","call_id":"c2","name":"f","arguments":"{}"}}`,
		`{"type":"response.completed","response":{"status":"completed","output":[]}}`)
	checkCalls(t, a.Response(), ReasonToolCalls, wantCall{"f", `{}`})
}

func TestOpenAIResponses_item_status_decides_open_and_cut(t *testing.T) {
	// added in_progress, no done: the terminal event's item is the call.
	a := feed(t, OpenAIResponses,
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"local_shell_call","id":"l","call_id":"c1","status":"in_progress","action":{"type":"exec","command":[],"env":{}}}}`,
		`{"type":"response.completed","response":{"status":"completed","output":[{"type":"local_shell_call","id":"l","call_id":"c1","status":"completed","action":{"type":"exec","command":["ls"],"env":{}}}]}}`)
	checkCalls(t, a.Response(), ReasonToolCalls, wantCall{KindLocalShell, `{"command":["ls"],"env":{},"type":"exec"}`})
	// still in_progress at the terminal event: truncated.
	a = feed(t, OpenAIResponses,
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"apply_patch_call","id":"p","call_id":"c1","status":"in_progress","operation":{"type":"create_file","path":"a","diff":""}}}`,
		`{"type":"response.completed","response":{"status":"completed","output":[]}}`)
	if c := a.Response().Calls[0]; !c.Truncated {
		t.Errorf("open item at the terminal event not truncated: %+v", c)
	}
	r, err := ParseResponse(OpenAIResponses, []byte(`{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"shell_call","id":"s","call_id":"c1","status":"incomplete","action":{"commands":["rm -rf /tmp/x"]}}]}`))
	if err != nil || len(r.Calls) != 1 || !r.Calls[0].Truncated || r.Finish != ReasonLength {
		t.Fatalf("incomplete item: %+v %v", r, err)
	}
}

// A call keeps the kind it started as (found by FuzzOpenAIResponses_items: an
// id-less computer_call at a shell call's slot turned it into a computer call
// still named shell_call), and argument text never lands in an item's object.
func TestOpenAIResponses_an_item_never_changes_another_calls_kind(t *testing.T) {
	a := feed(t, OpenAIResponses,
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"shell_call","id":"sh","call_id":"c","status":"in_progress","action":{"commands":[]}}}`,
		`{"type":"response.output_item.done","item":{"type":"computer_call"}}`,
		`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"x\":1}"}`)
	for _, c := range a.Response().Calls {
		if c.Kind == KindShell && (c.Name != KindShell || c.Arguments != `{"commands":[]}`) {
			t.Errorf("the shell call became %+v", c)
		}
		if c.Kind == KindComputer && c.Name != KindComputer {
			t.Errorf("computer call %+v", c)
		}
	}
	if n := len(a.Response().Calls); n != 3 {
		t.Errorf("%d calls, want the shell, the computer and the function call apart", n)
	}
}

// Keys match exactly and are named once, in these items as in every body.
func TestOpenAIResponses_client_items_exact_keys(t *testing.T) {
	r, err := ParseResponse(OpenAIResponses, []byte(`{"status":"completed","output":[{"type":"local_shell_call","id":"l","call_id":"c1","status":"completed","Action":{"type":"exec","command":["rm","-rf","/"]},"action":{"type":"exec","command":["ls"]}}]}`))
	if err != nil || len(r.Calls) != 1 || r.Calls[0].Arguments != `{"command":["ls"],"type":"exec"}` {
		t.Fatalf("%+v %v: the case-folded key must not be read", r.Calls, err)
	}
	body := `{"status":"completed","output":[{"type":"shell_call","id":"s","call_id":"c1","action":{"commands":["ls"]},"action":{"commands":["rm -rf /"]}}]}`
	_, err = ParseResponse(OpenAIResponses, []byte(body))
	at := strings.LastIndex(body, `"action":`)
	if !errors.Is(err, ErrDuplicateKey) || !strings.Contains(err.Error(), fmt.Sprintf(`duplicate key "action" at byte %d `, at)) {
		t.Fatalf("err %v, want ErrDuplicateKey at byte %d", err, at)
	}
	a, _ := NewAccumulator(OpenAIResponses)
	if err := a.Add([]byte(`{"type":"response.output_item.done","output_index":0,"item":{"type":"apply_patch_call","call_id":"c","operation":{"path":"a","path":"b"}}}`)); !errors.Is(err, ErrDuplicateKey) || len(a.Response().Calls) != 0 {
		t.Fatalf("streamed duplicate: %v %+v", err, a.Response().Calls)
	}
}

// A custom tool's free text is {"input": text}: quotes, newlines and
// control characters escaped; invalid UTF-8 kept raw, so the parse gate
// refuses it at its offset rather than run a replaced text.
func TestOpenAIResponses_custom_tool_free_text_is_an_input_argument(t *testing.T) {
	for _, test := range []struct{ text, want string }{
		{"SELECT \"a\"\n\tFROM t; -- \x01 é", `{"input":"SELECT \"a\"\n\tFROM t; -- \u0001 é"}`},
		{`C:\dir`, `{"input":"C:\\dir"}`},
		{"", `{"input":""}`},
	} {
		got := freeTextArgs([]byte(test.text))
		if got != test.want {
			t.Errorf("%q -> %s, want %s", test.text, got, test.want)
		}
		var v struct{ Input string }
		if err := json.Unmarshal([]byte(got), &v); err != nil || v.Input != test.text {
			t.Errorf("%s does not decode back to %q: %v", got, test.text, err)
		}
	}
	if _, _, perr := parse.Strict([]byte(freeTextArgs([]byte("rm \xff"))), parse.Limits{}); perr == nil || perr.Code != parse.CodeInvalidJSON || perr.Offset != 13 {
		t.Errorf("invalid UTF-8 in free text: %v, want invalid_json at byte 13", perr)
	}
}

// Each kind is answered in its item's own output format.
func TestToolResult_openai_responses_answers_each_kind_in_its_format(t *testing.T) {
	shot := json.RawMessage(`{"type":"computer_screenshot","image_url":"data:image/png;base64,AA=="}`)
	for _, test := range []struct {
		name string
		a    Answer
		want string
	}{
		{"function", Answer{ID: "c", Tool: "f", Text: "ok", OK: true}, `{"type":"function_call_output","call_id":"c","output":"ok"}`},
		{"custom", Answer{ID: "c", Tool: "write_sql", Kind: KindCustomTool, Text: "3 rows", OK: true}, `{"type":"custom_tool_call_output","call_id":"c","output":"3 rows"}`},
		{"local shell by kind", Answer{ID: "c", Tool: KindLocalShell, Kind: KindLocalShell, Text: "a\nb", OK: true}, `{"type":"local_shell_call_output","call_id":"c","output":"a\nb"}`},
		{"local shell by tool name", Answer{ID: "c", Tool: KindLocalShell, Text: "a", OK: true}, `{"type":"local_shell_call_output","call_id":"c","output":"a"}`},
		{"shell text", Answer{ID: "c", Tool: KindShell, Text: "a", OK: true}, `{"type":"shell_call_output","call_id":"c","output":[{"stdout":"a","stderr":"","outcome":{"type":"exit","exit_code":0}}]}`},
		{"shell refused", Answer{ID: "c", Tool: KindShell, Text: "Error: denied"}, `{"type":"shell_call_output","call_id":"c","output":[{"stdout":"","stderr":"Error: denied","outcome":{"type":"exit","exit_code":1}}]}`},
		{"shell executor list", Answer{ID: "c", Tool: KindShell, Text: "x", OK: true, Result: json.RawMessage(`{"output":[{"stdout":"a","stderr":"","outcome":{"type":"timeout"}}]}`)}, `{"type":"shell_call_output","call_id":"c","output":[{"stdout":"a","stderr":"","outcome":{"type":"timeout"}}]}`},
		{"apply patch", Answer{ID: "c", Tool: KindApplyPatch, Text: "done", OK: true}, `{"type":"apply_patch_call_output","call_id":"c","status":"completed","output":"done"}`},
		{"apply patch failed", Answer{ID: "c", Tool: KindApplyPatch, Text: "Error: x"}, `{"type":"apply_patch_call_output","call_id":"c","status":"failed","output":"Error: x"}`},
		{"computer", Answer{ID: "c", Tool: KindComputer, OK: true, Result: shot}, `{"type":"computer_call_output","call_id":"c","output":{"type":"computer_screenshot","image_url":"data:image/png;base64,AA=="}}`},
		{"computer with acks", Answer{ID: "c", Tool: KindComputer, OK: true, Result: json.RawMessage(`{"output":` + string(shot) + `,"acknowledged_safety_checks":[{"id":"sc"}]}`)}, `{"type":"computer_call_output","call_id":"c","output":{"type":"computer_screenshot","image_url":"data:image/png;base64,AA=="},"acknowledged_safety_checks":[{"id":"sc"}]}`},
		{"mcp approved", Answer{ID: "mcpr_1", Tool: KindMCPApproval, Text: "ok", OK: true}, `{"type":"mcp_approval_response","approval_request_id":"mcpr_1","approve":true}`},
		{"mcp denied", Answer{ID: "mcpr_1", Tool: KindMCPApproval, Text: "Error: policy"}, `{"type":"mcp_approval_response","approval_request_id":"mcpr_1","approve":false,"reason":"Error: policy"}`},
		{"mcp dry run never approves", Answer{ID: "mcpr_1", Tool: KindMCPApproval, Text: "dry run", OK: true, TextOnly: true}, `{"type":"mcp_approval_response","approval_request_id":"mcpr_1","approve":false,"reason":"dry run"}`},
		{"tool search", Answer{ID: "c", Tool: KindToolSearch, OK: true, Result: json.RawMessage(`[{"type":"function","name":"get_weather"}]`)}, `{"type":"tool_search_output","call_id":"c","execution":"client","status":"completed","tools":[{"type":"function","name":"get_weather"}]}`},
		{"unknown kind", Answer{ID: "c", Tool: "foo_call", Kind: "foo_call", Text: "Error: no tool"}, `{"type":"foo_call_output","call_id":"c","output":"Error: no tool"}`},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, err := ToolResult(OpenAIResponses, test.a)
			if err != nil || string(got) != test.want {
				t.Fatalf("got %s %v\nwant %s", got, err, test.want)
			}
		})
	}
	for _, a := range []Answer{
		{ID: "c", Tool: KindComputer, Text: "Error: denied by policy"},
		{ID: "c", Tool: KindComputer, Text: "clicked", OK: true, Result: json.RawMessage(`"clicked"`)},
		{ID: "c", Tool: KindToolSearch, Text: "Error: x"},
	} {
		if _, err := ToolResult(OpenAIResponses, a); !errors.Is(err, ErrResultShape) || !strings.Contains(err.Error(), a.Text) {
			t.Errorf("%+v: err %v, want ErrResultShape naming the outcome", a, err)
		}
	}
}

// FuzzOpenAIResponses_items: any whole body or event after one open client
// item never panics; every call of a built-in kind is named after it, with
// object arguments or none; a rejected event leaves the calls as they were.
func FuzzOpenAIResponses_items(f *testing.F) {
	for _, fx := range loadLocalFixtures(f) {
		if fx.dir != OpenAIResponses {
			continue
		}
		if !fx.streamed() {
			f.Add(fx.data, false)
			continue
		}
		evs, _ := SplitTranscript(fx.data)
		for _, ev := range evs {
			f.Add(ev, true)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, event bool) {
		check := func(r Response) {
			for i, c := range r.Calls {
				if c.Index != i {
					t.Fatalf("call %d has Index %d", i, c.Index)
				}
				if builtinKind(c.Kind) && (c.Name != c.Kind || c.Arguments != "" && !c.ArgumentsWereObject && c.Arguments[0] == '{') {
					t.Fatalf("call %+v of kind %s", c, c.Kind)
				}
			}
		}
		if !event {
			if r, err := ParseResponse(OpenAIResponses, data); err == nil {
				check(r)
			}
			return
		}
		a, _ := NewAccumulator(OpenAIResponses)
		if err := a.Add([]byte(`{"type":"response.output_item.added","output_index":0,"item":{"type":"shell_call","id":"sh","call_id":"c","status":"in_progress","action":{"commands":[]}}}`)); err != nil {
			t.Fatal(err)
		}
		before := a.Response()
		if err := a.Add(data); err != nil {
			if after := a.Response(); len(after.Calls) != len(before.Calls) {
				t.Fatalf("rejected event changed the calls: %v", err)
			}
			return
		}
		check(a.Response())
	})
}
