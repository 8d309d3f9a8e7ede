package stage

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/pkg/toolserver"
)

// responsesItemTools registers a tool under the local_shell_call kind and a
// free-text custom tool; nothing is registered under foo_call.
const responsesItemTools = `
tools:
  - name: local_shell_call
    description: Runs a command the model asks for in the local shell (OpenAI Responses local_shell_call).
    input_schema:
      type: object
      properties:
        type: {type: string, enum: [exec]}
        command: {type: array, items: {type: string}, minItems: 1}
        env: {type: object}
        timeout_ms: {type: integer}
        working_directory: {type: string}
        user: {type: string}
      required: [type, command]
      additionalProperties: false
    rules:
      - expr: args.command[0] != "rm"
        message: Nothing is removed from this shell.
    policy: {risk: read}
  - name: write_sql
    description: A read-only SQL query written as free text (an OpenAI Responses custom tool).
    input_schema:
      type: object
      properties:
        input: {type: string, minLength: 1}
      required: [input]
      additionalProperties: false
    policy: {risk: read}
`

// An OpenAI Responses item the client runs goes through every gate as a
// call of the tool registered under its kind and executes once; a
// custom_tool_call's free text arrives as {"input": text}; an item type
// toolgate does not know is recorded (failed: no_such_tool), never 0 calls. Before,
// each of these responses was no_tool_calls: the items vanished.
func TestPipeline_responses_client_items_are_calls_never_silence(t *testing.T) {
	var mu sync.Mutex
	got := map[string]json.RawMessage{}
	p := startRig(t, rig{
		files: map[string][]byte{"tools.yaml": exampleTools(t), "items.yaml": []byte(responsesItemTools)},
		serve: []string{"get_weather", "local_shell_call", "write_sql"},
		exec: func(tool string, c toolserver.Call) (any, error) {
			mu.Lock()
			got[tool] = c.Arguments
			mu.Unlock()
			if tool == "local_shell_call" {
				return "README.md\ngo.mod\n", nil
			}
			return map[string]any{"rows": 3}, nil
		},
	})

	p.publish("resp-local-shell", "openai-responses", []byte(`{"id":"resp-local-shell","status":"completed","model":"gpt-5-codex","output":[`+
		`{"id":"rs_1","type":"reasoning","summary":[]},`+
		`{"id":"ws_1","type":"web_search_call","status":"completed"},`+
		`{"id":"lsh_1","type":"local_shell_call","status":"completed","call_id":"call_ls_1","action":{"type":"exec","command":["ls"],"env":{},"working_directory":"/srv"}}],"usage":{"output_tokens":24}}`))
	rs := p.waitResults("resp-local-shell", 1)
	if len(rs) != 1 || rs[0]["status"] != "executed" || rs[0]["tool"] != "local_shell_call" || p.executed.Load() != 1 {
		t.Fatalf("results %v (executed %d), want local_shell_call executed once", rs, p.executed.Load())
	}
	msg, _ := rs[0]["message"].(map[string]any)
	if msg["type"] != "local_shell_call_output" || msg["call_id"] != "call_ls_1" || msg["output"] == "" {
		t.Fatalf("tool-result message %v, want a local_shell_call_output for call_ls_1", msg)
	}
	mu.Lock()
	if string(got["local_shell_call"]) != `{"command":["ls"],"env":{},"type":"exec","working_directory":"/srv"}` {
		t.Errorf("the executor got %s, want the action object", got["local_shell_call"])
	}
	mu.Unlock()

	// The same kind's rules judge it like any call: rm is refused, never run.
	p.publish("resp-local-shell-rm", "openai-responses", []byte(`{"id":"resp-local-shell-rm","status":"completed","output":[`+
		`{"id":"lsh_2","type":"local_shell_call","status":"completed","call_id":"call_ls_2","action":{"type":"exec","command":["rm","-rf","/srv"],"env":{}}}]}`))
	rs = p.waitResults("resp-local-shell-rm", 1)
	if rs[0]["status"] != "business_invalid" || p.executed.Load() != 1 {
		t.Fatalf("rm: %v (executed %d), want business_invalid and nothing run", rs[0], p.executed.Load())
	}

	p.publish("resp-custom", "openai-responses", []byte(`{"id":"resp-custom","status":"completed","output":[`+
		`{"id":"ctc_1","type":"custom_tool_call","status":"completed","call_id":"call_sql_1","name":"write_sql","input":"SELECT \"name\" FROM users\nWHERE age > 25"}]}`))
	rs = p.waitResults("resp-custom", 1)
	if rs[0]["status"] != "executed" || rs[0]["tool"] != "write_sql" || p.executed.Load() != 2 {
		t.Fatalf("custom tool: %v (executed %d), want write_sql executed once", rs[0], p.executed.Load())
	}
	// Its answer is the kind's own item: the Responses API refuses a
	// function_call_output for a custom tool call.
	if msg, _ := rs[0]["message"].(map[string]any); msg["type"] != "custom_tool_call_output" || msg["call_id"] != "call_sql_1" {
		t.Errorf("custom tool answer %v, want a custom_tool_call_output for call_sql_1", rs[0]["message"])
	}
	mu.Lock()
	var in struct{ Input string }
	if err := json.Unmarshal(got["write_sql"], &in); err != nil || in.Input != "SELECT \"name\" FROM users\nWHERE age > 25" {
		t.Errorf("the executor got %s (%v), want the free text as input", got["write_sql"], err)
	}
	mu.Unlock()

	p.publish("resp-foo", "openai-responses", []byte(`{"id":"resp-foo","status":"completed","output":[`+
		`{"id":"foo_1","type":"foo_call","status":"completed","call_id":"call_foo_1","action":{"type":"frobnicate"}}]}`))
	rs = p.waitResults("resp-foo", 1)
	if rs[0]["status"] != "failed" || rs[0]["failure"] != "no_such_tool" || rs[0]["tool"] != "foo_call" || p.executed.Load() != 2 {
		t.Fatalf("unknown item: %v (executed %d), want a recorded no_such_tool call of foo_call", rs[0], p.executed.Load())
	}
}

// An mcp_approval_request is a call of the tool registered under its kind:
// the gates decide, and the answer is an mcp_approval_response that approves
// only a call that ran; one the rules refuse is answered approve false with
// the reason, and nothing runs.
func TestPipeline_responses_mcp_approval_request_is_decided_by_the_gates(t *testing.T) {
	const approvals = `
tools:
  - name: mcp_approval_request
    description: Approves the MCP calls OpenAI asks the client about.
    input_schema:
      type: object
      properties:
        server_label: {type: string}
        name: {type: string}
        arguments: {type: object}
      required: [server_label, name]
    rules:
      - expr: args.server_label == "zip1" && args.name == "create_short_url"
        message: Only zip1's create_short_url is approved.
    policy: {risk: read}
`
	p := startRig(t, rig{files: map[string][]byte{"tools.yaml": exampleTools(t), "mcp.yaml": []byte(approvals)},
		serve: []string{"mcp_approval_request"}})
	request := func(rid, server, name string) []byte {
		return []byte(`{"id":"` + rid + `","status":"completed","output":[{"id":"mcpr_` + rid + `","type":"mcp_approval_request","arguments":"{\"url\":\"https://ai-sdk.dev/\"}","name":"` + name + `","server_label":"` + server + `"}]}`)
	}
	p.publish("resp-mcp-ok", "openai-responses", request("resp-mcp-ok", "zip1", "create_short_url"))
	rs := p.waitResults("resp-mcp-ok", 1)
	msg, _ := rs[0]["message"].(map[string]any)
	if rs[0]["status"] != "executed" || msg["type"] != "mcp_approval_response" || msg["approval_request_id"] != "mcpr_resp-mcp-ok" || msg["approve"] != true {
		t.Fatalf("approved request: %v", rs[0])
	}
	p.publish("resp-mcp-no", "openai-responses", request("resp-mcp-no", "other", "delete_everything"))
	rs = p.waitResults("resp-mcp-no", 1)
	msg, _ = rs[0]["message"].(map[string]any)
	if rs[0]["status"] != "business_invalid" || msg["approve"] != false || msg["reason"] == "" || p.executed.Load() != 1 {
		t.Fatalf("refused request: %v (executed %d), want approve false with a reason and nothing run", rs[0], p.executed.Load())
	}
}
