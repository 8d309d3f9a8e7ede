package provider

import (
	"errors"
	"strings"
	"testing"
)

// Every recorded body and stream of every provider, the shared collection's
// and the project's own, is detected as the provider it was written in (an
// OpenAI-compatible recording of another vendor is openai-chat).
func TestDetect_every_fixture_is_its_provider(t *testing.T) {
	fixtures := append(loadFixtures(t), loadLocalFixtures(t)...)
	for _, f := range fixtures {
		got, err := Detect(f.data)
		if err != nil || got != f.provider {
			t.Errorf("%s/%s: detected %q (%v), want %q", f.dir, f.name, got, err, f.provider)
		}
	}
}

func TestDetect_error_bodies_and_events(t *testing.T) {
	for _, test := range []struct{ name, data, want string }{
		{"openai error body", `{"error":{"message":"bad key","type":"invalid_request_error"}}`, OpenAIChat},
		{"gemini error body", `{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}`, Gemini},
		{"anthropic error body", `{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`, Anthropic},
		{"responses error event", "data: {\"type\":\"error\",\"code\":\"x\",\"message\":\"m\",\"sequence_number\":1}\n\n", OpenAIResponses},
		{"ollama stream", "{\"model\":\"m\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\",\"content\":\"a\"},\"done\":false}\n{\"model\":\"m\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true}\n", Ollama},
		{"decided after keep-alives", "data: [DONE]\n\ndata: {\"x\":1}\n\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n", Anthropic},
	} {
		if got, err := Detect([]byte(test.data)); err != nil || got != test.want {
			t.Errorf("%s: %q %v, want %q", test.name, got, err, test.want)
		}
	}
}

// What names no provider is an error that says what it saw and lists every
// provider, never a guess.
func TestDetect_unknown_shapes_list_the_providers(t *testing.T) {
	for _, data := range []string{``, `{}`, `{"result":"ok","items":[1]}`, `not json`, "data: {\"foo\":1}\n\ndata: {\"bar\":2}\n\n", `[1,2]`, `{"type":"something_else"}`} {
		got, err := Detect([]byte(data))
		if !errors.Is(err, ErrUndetected) || got != "" {
			t.Errorf("%q: %q %v, want ErrUndetected", data, got, err)
			continue
		}
		for _, name := range Names() {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("%q: error %q does not list %s", data, err, name)
			}
		}
	}
	_, err := Detect([]byte(`{"result":"ok","items":[1]}`))
	if !strings.Contains(err.Error(), "items, result") {
		t.Errorf("error %q does not name the keys it saw", err)
	}
}
