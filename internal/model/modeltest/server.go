// Package modeltest is a model endpoint for tests: an HTTP server started in
// the test that speaks one wire protocol (OpenAI Chat Completions or
// Anthropic Messages), answers with scripted replies in order (the last one
// repeats) and counts the requests it received. No model is reachable from a
// test, and none is needed.
package modeltest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/model"
)

// Reply is one scripted answer.
type Reply struct {
	Status     int    // HTTP status; 0 means 200
	RetryAfter string // Retry-After header, when set
	Body       string
	Hang       bool // answer nothing until the client gives up
}

// Server is a scripted model endpoint.
type Server struct {
	Protocol model.Protocol
	srv      *httptest.Server
	mu       sync.Mutex
	bodies   [][]byte
	replies  []Reply
}

// New starts a server for protocol p that answers with replies; it is
// closed when the test ends. A request to a path other than the protocol's
// (/v1/chat/completions, /v1/messages) gets 404 and is counted too.
func New(t testing.TB, p model.Protocol, replies ...Reply) *Server {
	t.Helper()
	if len(replies) == 0 {
		t.Fatal("modeltest: no reply scripted")
	}
	s := &Server{Protocol: p, replies: replies}
	path := "/v1/chat/completions"
	if p == model.ProtocolAnthropic {
		path = "/v1/messages"
	}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, b)
		s.mu.Unlock()
		if r.URL.Path != path || r.Method != http.MethodPost {
			http.Error(w, `{"error":"wrong path"}`, http.StatusNotFound)
			return
		}
		rp := replies[min(n, len(replies)-1)]
		if rp.Hang {
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		if rp.RetryAfter != "" {
			w.Header().Set("Retry-After", rp.RetryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		status := rp.Status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, rp.Body)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// Config is a client configuration pointing at the server: one request per
// call (no retries) unless changed, short timeouts and waits.
func (s *Server) Config() model.Config {
	return model.Config{
		Protocol: s.Protocol, Endpoint: s.srv.URL + "/v1", Model: "repair-test-model",
		Timeout: 5 * time.Second, MaxRetries: -1, MaxBackoff: 50 * time.Millisecond,
	}
}

// Requests is how many requests the server received.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

// Bodies are the request bodies received, in order.
func (s *Server) Bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

// ToolCall is a 200 answer holding one call of tool with the raw arguments
// args (for Anthropic args must be a JSON object: its input is one).
func ToolCall(p model.Protocol, tool, args string) Reply {
	if p == model.ProtocolAnthropic {
		return Reply{Body: fmt.Sprintf(`{"id":"msg_repair","type":"message","role":"assistant","model":"repair-test-model",`+
			`"content":[{"type":"tool_use","id":"toolu_repair","name":%s,"input":%s}],"stop_reason":"tool_use",`+
			`"usage":{"input_tokens":50,"output_tokens":20}}`, quote(tool), args)}
	}
	return Reply{Body: fmt.Sprintf(`{"id":"chatcmpl-repair","object":"chat.completion","model":"repair-test-model",`+
		`"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_repair","type":"function",`+
		`"function":{"name":%s,"arguments":%s}}]},"finish_reason":"tool_calls"}]}`, quote(tool), quote(args))}
}

// Truncated is a 200 answer whose one call of tool was cut off by the
// output token limit: OpenAI finish_reason "length" with the raw arguments
// cut, Anthropic stop_reason "max_tokens" (its input is whatever object
// args is).
func Truncated(p model.Protocol, tool, args string) Reply {
	if p == model.ProtocolAnthropic {
		return Reply{Body: fmt.Sprintf(`{"id":"msg_repair","type":"message","role":"assistant","model":"repair-test-model",`+
			`"content":[{"type":"tool_use","id":"toolu_repair","name":%s,"input":%s}],"stop_reason":"max_tokens",`+
			`"usage":{"input_tokens":50,"output_tokens":1024}}`, quote(tool), args)}
	}
	return Reply{Body: fmt.Sprintf(`{"id":"chatcmpl-repair","object":"chat.completion","model":"repair-test-model",`+
		`"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_repair","type":"function",`+
		`"function":{"name":%s,"arguments":%s}}]},"finish_reason":"length"}]}`, quote(tool), quote(args))}
}

// Text is a 200 answer in text without a tool call.
func Text(p model.Protocol, text string) Reply {
	if p == model.ProtocolAnthropic {
		return Reply{Body: fmt.Sprintf(`{"id":"msg_repair","type":"message","role":"assistant","model":"repair-test-model",`+
			`"content":[{"type":"text","text":%s}],"stop_reason":"end_turn","usage":{"input_tokens":50,"output_tokens":20}}`, quote(text))}
	}
	return Reply{Body: fmt.Sprintf(`{"id":"chatcmpl-repair","object":"chat.completion","model":"repair-test-model",`+
		`"choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}]}`, quote(text))}
}

// Status is a non-2xx answer with an error body in the protocol's shape and
// an optional Retry-After.
func Status(p model.Protocol, code int, retryAfter string) Reply {
	body := fmt.Sprintf(`{"error":{"message":"scripted HTTP %d","type":"test_error"}}`, code)
	if p == model.ProtocolAnthropic {
		body = fmt.Sprintf(`{"type":"error","error":{"type":"test_error","message":"scripted HTTP %d"}}`, code)
	}
	return Reply{Status: code, RetryAfter: retryAfter, Body: body}
}

// Hang is an answer that never comes.
func Hang() Reply { return Reply{Hang: true} }

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
