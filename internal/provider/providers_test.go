package provider

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestProviders_one_row_each_named_once(t *testing.T) {
	names := Names()
	// The first five, in this order, are the contract before the table;
	// a new provider is a row after them.
	if len(names) < 5 || !slices.Equal(names[:5], []string{"openai-chat", "openai-responses", "anthropic", "gemini", "ollama"}) {
		t.Errorf("Names() = %v", names)
	}
	for _, c := range providers() {
		if c.whole == nil || c.event == nil || c.toolResult == nil {
			t.Errorf("%s: a codec func is missing", c.name)
		}
		if n := slices.Index(names, c.name); n < 0 || slices.Index(names[n+1:], c.name) >= 0 {
			t.Errorf("%s is not named exactly once", c.name)
		}
	}
	names[0] = "x"
	if Names()[0] != OpenAIChat {
		t.Error("Names shares its slice")
	}
}

func TestUnknownError_lists_the_names_and_is_ErrUnknownProvider(t *testing.T) {
	_, err := NewAccumulator("vllm")
	names := Names()
	want := "provider: unknown provider (use " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1] + `): "vllm"`
	if len(names) == 5 && want != `provider: unknown provider (use openai-chat, openai-responses, anthropic, gemini or ollama): "vllm"` {
		t.Errorf("the five providers' text changed: %s", want)
	}
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	var ue *UnknownError
	if !errors.As(err, &ue) || ue.Name != "vllm" || !errors.Is(err, ErrUnknownProvider) {
		t.Errorf("err %#v is not an UnknownError matching ErrUnknownProvider", err)
	}
}

func TestToolResult_unknown_provider_gets_the_openai_chat_shape(t *testing.T) {
	a := Answer{ID: "i", Text: "<t>"}
	got, err := ToolResult("llama.cpp", a)
	want, _ := ToolResult(OpenAIChat, a)
	if err != nil || string(got) != string(want) || string(got) != `{"role":"tool","tool_call_id":"i","content":"<t>"}` {
		t.Errorf("got %s, %v", got, err)
	}
	if _, err := ToolResult(Anthropic, Answer{}); !errors.Is(err, ErrNoCallID) {
		t.Errorf("anthropic without id: %v", err)
	}
	if _, err := ToolResult(Gemini, Answer{ID: "i"}); !errors.Is(err, ErrNoToolName) {
		t.Errorf("gemini without tool: %v", err)
	}
}
