package producer

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Await reads outcomes until it holds n calls' results, or the response's
// own result (a response that yielded no call: no_tool_calls, rejected). A
// call seen twice (a stage redelivered and published its outcome again)
// counts once, its first copy kept. The calls come in call order (call ids
// are <response-id>-<index>); on ctx's end or an unreadable result it
// returns what it has with the error. It reads every watched response
// alike: watch one response per Await.
func (w *Watch) Await(ctx context.Context, n int) ([]wire.Result, *wire.ResponseResult, error) {
	var calls []wire.Result
	seen := map[string]bool{}
	for len(calls) < n {
		o, err := w.Next(ctx)
		if err != nil {
			return sorted(calls), nil, err
		}
		if o.Response != nil {
			return sorted(calls), o.Response, nil
		}
		if !seen[o.Call.CallID] {
			seen[o.Call.CallID] = true
			calls = append(calls, *o.Call)
		}
	}
	return sorted(calls), nil, nil
}

// sorted orders results by the index their call id ends with.
func sorted(rs []wire.Result) []wire.Result {
	slices.SortStableFunc(rs, func(a, b wire.Result) int {
		ia, oka := callIndex(a.CallID)
		ib, okb := callIndex(b.CallID)
		if oka && okb && ia != ib {
			return cmp.Compare(ia, ib)
		}
		return strings.Compare(a.CallID, b.CallID)
	})
	return rs
}

func callIndex(callID string) (int, bool) {
	i := strings.LastIndexByte(callID, '-')
	if i < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(callID[i+1:])
	return n, err == nil
}

// Messages returns each result's tool-result item, in the provider's own
// format (OpenAI role: tool, Responses function_call_output, Anthropic
// tool_result, Gemini functionResponse, Gemini Interactions function_result,
// Ollama role: tool, Bedrock toolResult, Cohere role: tool), ready to append
// to the conversation in the order given. A result without one is left out.
func Messages(rs []wire.Result) []json.RawMessage {
	var out []json.RawMessage
	for _, r := range rs {
		if m := bytes.TrimSpace(r.Message); len(m) > 0 && !bytes.Equal(m, []byte("null")) {
			out = append(out, r.Message)
		}
	}
	return out
}
