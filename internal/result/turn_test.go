package result

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestTurn_anthropic_results_share_one_user_message(t *testing.T) {
	msgs, err := turn([]Outcome{okOutcome("anthropic"), failedOutcome("anthropic")})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 {
		t.Fatalf("got %d messages, want 1", len(msgs))
	}
	var m struct {
		Role    string `json:"role"`
		Content []struct {
			Type      string `json:"type"`
			ToolUseID string `json:"tool_use_id"`
			IsError   bool   `json:"is_error"`
		} `json:"content"`
	}
	if err := json.Unmarshal(msgs[0], &m); err != nil {
		t.Fatal(err)
	}
	if m.Role != "user" || len(m.Content) != 2 {
		t.Fatalf("message = %s", msgs[0])
	}
	if m.Content[0].ToolUseID != "prov-1" || m.Content[0].IsError || m.Content[0].Type != "tool_result" {
		t.Fatalf("first block = %+v", m.Content[0])
	}
	if m.Content[1].ToolUseID != "prov-2" || !m.Content[1].IsError {
		t.Fatalf("second block = %+v", m.Content[1])
	}
}

func TestTurn_gemini_results_share_one_content(t *testing.T) {
	msgs, err := turn([]Outcome{okOutcome("gemini"), failedOutcome("gemini")})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 {
		t.Fatalf("got %d messages, want 1", len(msgs))
	}
	var m struct {
		Role  string `json:"role"`
		Parts []struct {
			FunctionResponse struct {
				Name     string         `json:"name"`
				Response map[string]any `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	}
	if err := json.Unmarshal(msgs[0], &m); err != nil {
		t.Fatal(err)
	}
	if m.Role != "user" || len(m.Parts) != 2 {
		t.Fatalf("message = %s", msgs[0])
	}
	if _, ok := m.Parts[1].FunctionResponse.Response["error"]; !ok {
		t.Fatalf("failed part has no error key: %s", msgs[0])
	}
}

func TestTurn_openai_gets_one_message_per_call(t *testing.T) {
	for _, provider := range []string{"openai-chat", "openai-responses", "ollama"} {
		msgs, err := turn([]Outcome{okOutcome(provider), failedOutcome(provider)})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 2 {
			t.Fatalf("%s: got %d messages, want 2", provider, len(msgs))
		}
		if !strings.Contains(string(msgs[1]), "Error: ") {
			t.Fatalf("%s: failure message does not say so: %s", provider, msgs[1])
		}
	}
}

func TestTurn_mixed_providers_is_an_error(t *testing.T) {
	if _, err := turn([]Outcome{okOutcome("anthropic"), failedOutcome("gemini")}); err == nil {
		t.Fatal("mixed providers accepted")
	}
}

func TestTurn_error_of_one_outcome_names_it(t *testing.T) {
	bad := failedOutcome("openai-chat")
	bad.ProviderCallID, bad.CallID = "", ""
	_, err := turn([]Outcome{okOutcome("openai-chat"), bad})
	if err == nil || !strings.Contains(err.Error(), "outcome 1") {
		t.Fatalf("err = %v", err)
	}
}

func TestTurn_empty_is_no_messages(t *testing.T) {
	msgs, err := turn(nil)
	if err != nil || len(msgs) != 0 {
		t.Fatalf("turn(nil) = %v, %v", msgs, err)
	}
}

// turn is how a caller answers all tool calls of one model response: the
// test of Message's contract that Anthropic blocks and Gemini parts wrap into
// one user message.
//
// turn returns the messages that answer all tool calls of one model
// response, in order, ready to append to the conversation.
//
// Anthropic and Gemini expect every result of one response in a single
// message: turn returns one {"role":"user","content":[tool_result...]}
// (Anthropic) or one {"role":"user","parts":[functionResponse...]} (Gemini).
// The other providers get one message per outcome, as Message builds it.
// All outcomes must name the same provider; an empty list yields no
// messages.
func turn(outcomes []Outcome) ([]json.RawMessage, error) {
	if len(outcomes) == 0 {
		return nil, nil
	}
	provider := outcomes[0].Provider
	items := make([]json.RawMessage, 0, len(outcomes))
	for i, o := range outcomes {
		if o.Provider != provider {
			return nil, fmt.Errorf("result: outcome %d is for provider %q, but outcome 0 is for %q: one turn answers one response", i, o.Provider, provider)
		}
		m, err := Message(o)
		if err != nil {
			return nil, fmt.Errorf("result: outcome %d (call %s): %w", i, o.CallID, err)
		}
		items = append(items, m)
	}
	switch provider {
	case "anthropic":
		m, err := marshal(struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		}{"user", items})
		if err != nil {
			return nil, err
		}
		return []json.RawMessage{m}, nil
	case "gemini":
		m, err := marshal(struct {
			Role  string            `json:"role"`
			Parts []json.RawMessage `json:"parts"`
		}{"user", items})
		if err != nil {
			return nil, err
		}
		return []json.RawMessage{m}, nil
	}
	return items, nil
}
