package wire

import (
	"encoding/json"
	"testing"
	"time"
)

// The JSON on toolgate.results.* and executor replies is a public contract:
// these literals are what toolgate published before pkg/wire existed.
func TestWire_json_is_the_published_contract(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"result full", Result{
			CallID: "c1", ResponseID: "r1", ProviderCallID: "p1", Provider: "anthropic", Tool: "t",
			Status: Failed, Failure: SchemaInvalid, OK: false, Errors: []string{"e"}, Result: json.RawMessage(`{"a":1}`),
			RepairAttempts: 2, Source: "native", Text: "x", Message: json.RawMessage(`{"m":1}`),
			History: []Step{{Stage: "parse", Status: Parsed, At: at, Note: "n"}, {Stage: "validate", Status: SchemaInvalid, At: at}},
		}, `{"call_id":"c1","response_id":"r1","provider_call_id":"p1","provider":"anthropic","tool":"t","status":"failed","failure":"schema_invalid","ok":false,"errors":["e"],"result":{"a":1},"repair_attempts":2,"source":"native","text":"x","message":{"m":1},"history":[{"stage":"parse","status":"parsed","at":"2026-12-01T10:00:00Z","note":"n"},{"stage":"validate","status":"schema_invalid","at":"2026-12-01T10:00:00Z"}]}`},
		{"result empty", Result{}, `{"call_id":"","response_id":"","provider":"","tool":"","status":"","ok":false,"repair_attempts":0,"source":"","text":"","message":null,"history":null}`},
		{"response result", ResponseResult{ResponseID: "r", Provider: "ollama", Status: NoToolCalls, OK: true, Errors: []string{"e"}, Text: "t"},
			`{"response_id":"r","provider":"ollama","status":"no_tool_calls","ok":true,"errors":["e"],"text":"t"}`},
		{"response result empty", ResponseResult{}, `{"response_id":"","provider":"","status":"","ok":false}`},
		{"exec reply ok", ExecReply{OK: true, Result: json.RawMessage(`[1]`)}, `{"ok":true,"result":[1]}`},
		{"exec reply error", ExecReply{Error: "boom"}, `{"ok":false,"error":"boom"}`},
		{"status unknown", ExecStatusReply{}, `{"known":false}`},
		{"status known", ExecStatusReply{Known: true, OK: true, Result: json.RawMessage(`"r"`), Error: "e"}, `{"known":true,"ok":true,"result":"r","error":"e"}`},
	}
	for _, c := range cases {
		got, err := json.Marshal(c.v)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	r := ExecStatusReply{Known: true, OK: true, Result: json.RawMessage(`1`), Error: "e"}.Reply()
	if !r.OK || string(r.Result) != "1" || r.Error != "e" {
		t.Errorf("Reply() = %+v", r)
	}
}

func TestSubjects_and_headers_keep_their_names(t *testing.T) {
	got := []string{SubjectInResponse, InStream("r1"), Results("acme", "r1"), Results("", "r1"), Results("a.b", "r1"), Exec("tool"), HeaderProvider, HeaderResponseID, HeaderQuery + ": " + QueryStatus}
	want := []string{"toolgate.in.response", "toolgate.in.stream.r1", "toolgate.results.acme.r1", "toolgate.results._.r1", "toolgate.results.~2e7336dc8eba87ef472df568c35482ab.r1", "toolgate.exec.tool", "Toolgate-Provider", "Toolgate-Response-Id", "Toolgate-Query: status"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %q, want %q", i, got[i], want[i])
		}
	}
}
