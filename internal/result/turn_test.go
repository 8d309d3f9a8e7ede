package result

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTurn_anthropic_results_share_one_user_message(t *testing.T) {
	msgs, err := Turn([]Outcome{okOutcome("anthropic"), failedOutcome("anthropic")})
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
	msgs, err := Turn([]Outcome{okOutcome("gemini"), failedOutcome("gemini")})
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
		msgs, err := Turn([]Outcome{okOutcome(provider), failedOutcome(provider)})
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
	if _, err := Turn([]Outcome{okOutcome("anthropic"), failedOutcome("gemini")}); err == nil {
		t.Fatal("mixed providers accepted")
	}
}

func TestTurn_error_of_one_outcome_names_it(t *testing.T) {
	bad := failedOutcome("openai-chat")
	bad.ProviderCallID, bad.CallID = "", ""
	_, err := Turn([]Outcome{okOutcome("openai-chat"), bad})
	if err == nil || !strings.Contains(err.Error(), "outcome 1") {
		t.Fatalf("err = %v", err)
	}
}

func TestTurn_empty_is_no_messages(t *testing.T) {
	msgs, err := Turn(nil)
	if err != nil || len(msgs) != 0 {
		t.Fatalf("Turn(nil) = %v, %v", msgs, err)
	}
}
