package gates

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/parse"
	"github.com/toolgate/toolgate/internal/provider"
)

func newParseGate(t *testing.T) *Parse {
	t.Helper()
	return &Parse{Tools: newRepairTools(t), Limits: parse.DefaultLimits(), Now: func() time.Time { return repairT0 }}
}

// nativeCalls is what accumulate makes of an openai-chat body with
// Toolgate-Max-Tokens maxTokens: one Received envelope per call.
func nativeCalls(t *testing.T, body string, maxTokens int) []call.Envelope {
	t.Helper()
	resp, err := provider.ParseResponse(provider.OpenAIChat, []byte(body), provider.WithMaxTokens(maxTokens))
	if err != nil {
		t.Fatal(err)
	}
	var out []call.Envelope
	for _, c := range resp.Calls {
		e := call.New("resp-cap", c.Index, repairT0)
		e.Provider, e.ToolName, e.RawArguments = resp.Provider, c.Name, c.Arguments
		e.FinishReason, e.ProviderFinish = string(resp.Finish), resp.ProviderFinish
		if c.Truncated {
			e.TruncatedHint = c.TruncatedWhy
		}
		out = append(out, e)
	}
	return out
}

func parseOne(t *testing.T, g *Parse, e call.Envelope) call.Envelope {
	t.Helper()
	out, err := g.Handle(context.Background(), e)
	if err != nil || len(out) != 1 {
		t.Fatalf("Handle: %v, %d envelopes", err, len(out))
	}
	return out[0]
}

func chatAtCap(finish string, completionTokens int) string {
	return fmt.Sprintf(`{"id":"resp-cap","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[`+
		`{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},`+
		`{"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Lima\"}"}}]},"finish_reason":%q}],`+
		`"usage":{"prompt_tokens":20,"completion_tokens":%d,"total_tokens":99}}`, finish, completionTokens)
}

// Before issue 16 a call whose response reached Toolgate-Max-Tokens went on
// as parsed ("arguments are complete JSON, so the call goes on").
func TestParse_output_at_the_cap_is_truncated_even_with_complete_json(t *testing.T) {
	g := newParseGate(t)
	for _, test := range []struct {
		name      string
		body      string
		maxTokens int
		want      call.Status
		why       string
	}{
		{"usage_equals_the_cap", chatAtCap("tool_calls", 64), 64, call.Truncated, "max tokens"},
		{"usage_over_the_cap", chatAtCap("tool_calls", 70), 64, call.Truncated, "max tokens"},
		{"provider_length_limit", chatAtCap("length", 10), 0, call.Truncated, "length"},
		{"below_the_cap", chatAtCap("tool_calls", 63), 64, call.Parsed, ""},
		{"no_cap_sent", chatAtCap("tool_calls", 64), 0, call.Parsed, ""},
	} {
		t.Run(test.name, func(t *testing.T) {
			envs := nativeCalls(t, test.body, test.maxTokens)
			if len(envs) != 2 {
				t.Fatalf("%d calls, want 2", len(envs))
			}
			for _, in := range envs {
				e := parseOne(t, g, in)
				if e.Status != test.want {
					t.Fatalf("%s ended %s (%v), want %s", e.CallID, e.Status, e.Errors, test.want)
				}
				if test.want != call.Truncated {
					if len(e.Arguments) == 0 {
						t.Fatalf("%s parsed without arguments", e.CallID)
					}
					continue
				}
				if len(e.Arguments) != 0 {
					t.Fatalf("%s truncated but kept arguments %s", e.CallID, e.Arguments)
				}
				errs := strings.Join(e.Errors, "; ")
				if !strings.Contains(errs, test.why) || !strings.Contains(errs, "token cap") {
					t.Fatalf("%s errors %q do not say why (%q)", e.CallID, errs, test.why)
				}
				if h := e.History[len(e.History)-1]; h.Status != call.Truncated || !strings.Contains(h.Note, "token cap") {
					t.Fatalf("%s history %+v does not record the cap", e.CallID, h)
				}
			}
		})
	}
}

func TestRecover_text_at_the_cap_is_truncated(t *testing.T) {
	g := newParseGate(t)
	carrier := call.New("resp-cap-text", 0, repairT0)
	carrier.CallID = "resp-cap-text-text"
	carrier.Carrier, carrier.Source = true, call.SourceTextJSON
	carrier.Text = `<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`
	carrier.FinishReason = "stop"
	carrier.TruncatedHint = "output tokens (64) reached the requested max tokens (64)"
	out, err := g.Handle(context.Background(), carrier)
	if err != nil || len(out) != 1 {
		t.Fatalf("Handle: %v %d", err, len(out))
	}
	if e := out[0]; e.Status != call.Truncated || len(e.Arguments) != 0 || !strings.Contains(strings.Join(e.Errors, ";"), "max tokens") {
		t.Fatalf("recovered call at the cap: %s args %s errors %v, want truncated with the reason", e.Status, e.Arguments, e.Errors)
	}
	carrier.TruncatedHint = ""
	out, _ = g.Handle(context.Background(), carrier)
	if out[0].Status != call.Parsed {
		t.Fatalf("below the cap: %s %v, want parsed", out[0].Status, out[0].Errors)
	}
}
