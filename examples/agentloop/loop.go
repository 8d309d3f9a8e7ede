package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/producer"
)

// Loop is one conversation's agent loop.
type Loop struct {
	Model     string // chat completions URL
	ModelName string
	APIKey    string
	JS        jetstream.JetStream
	MaxTurns  int // default 8
}

// toolsJSON is the tool definitions sent to the model: examples/tools.yaml's
// get_weather.
const toolsJSON = (`[{"type":"function","function":{"name":"get_weather","description":"Current weather for a city",
"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`)

// Run asks the model, lets toolgate gate and run each tool call the model
// proposes, gives the model the results, and returns its final text.
func (l Loop) Run(ctx context.Context, prompt string) (string, error) {
	p := producer.New(l.JS)
	messages := []json.RawMessage{mustJSON(map[string]string{"role": "user", "content": prompt})}
	turns := l.MaxTurns
	if turns == 0 {
		turns = 8
	}
	for turn := 0; turn < turns; turn++ {
		body, err := l.ask(ctx, messages)
		if err != nil {
			return "", err
		}
		var resp struct {
			Choices []struct {
				Message struct {
					Content   *string           `json:"content"`
					ToolCalls []json.RawMessage `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(body, &resp); err != nil || len(resp.Choices) == 0 {
			return "", fmt.Errorf("model: an answer that is not a chat completion: %s", clip(body))
		}
		msg := resp.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			if msg.Content == nil {
				return "", errors.New("model: no text and no tool call")
			}
			return *msg.Content, nil
		}
		// Watch before publishing: results are not replayed.
		rid := newID()
		w, err := p.Watch(rid)
		if err != nil {
			return "", err
		}
		err = p.PublishResponse(ctx, producer.Meta{Provider: "openai-chat", ResponseID: rid}, body)
		if err != nil {
			w.Stop()
			return "", err
		}
		calls, r, err := w.Await(ctx, len(msg.ToolCalls))
		w.Stop()
		if err != nil {
			return "", fmt.Errorf("toolgate: response %s: %w", rid, err)
		}
		if err := producer.Refused(r); err != nil {
			return "", err
		}
		// The assistant's turn as the model wrote it, then one tool
		// message per call: a refused call's says why, so the model can
		// correct itself.
		var raw struct {
			Choices []struct {
				Message json.RawMessage `json:"message"`
			} `json:"choices"`
		}
		_ = json.Unmarshal(body, &raw)
		messages = append(messages, raw.Choices[0].Message)
		messages = append(messages, producer.Messages(calls)...)
	}
	return "", fmt.Errorf("no final answer after %d turns", turns)
}

// ask posts the conversation to the model and returns its answer's body.
func (l Loop) ask(ctx context.Context, messages []json.RawMessage) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.Model, bytes.NewReader(mustJSON(map[string]any{
		"model": l.ModelName, "messages": messages, "tools": json.RawMessage(toolsJSON),
	})))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if l.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+l.APIKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("model: %s: %s", resp.Status, clip(body))
	}
	return body, nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "agentloop-" + hex.EncodeToString(b)
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
