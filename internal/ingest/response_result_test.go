package ingest

import (
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/pkg/wire"
)

// A response-level result on toolgate.results.<response-id> (public
// contract, pkg/wire) keeps its bytes.
func TestResponseResult_json_is_byte_identical(t *testing.T) {
	for _, test := range []struct {
		r    wire.ResponseResult
		want string
	}{
		{wire.ResponseResult{ResponseID: "r1", Provider: "gemini", Status: call.Rejected, Errors: []string{"why"}, Text: "why"},
			`{"response_id":"r1","provider":"gemini","status":"rejected","ok":false,"errors":["why"],"text":"why"}`},
		{wire.ResponseResult{ResponseID: "r2", Provider: "ollama", Status: call.NoToolCalls, OK: true},
			`{"response_id":"r2","provider":"ollama","status":"no_tool_calls","ok":true}`},
	} {
		if got, err := json.Marshal(test.r); err != nil || string(got) != test.want {
			t.Errorf("got %s (%v)\nwant %s", got, err, test.want)
		}
	}
}
