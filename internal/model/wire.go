package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// AnthropicVersion is the anthropic-version header sent with every
// Anthropic request.
const AnthropicVersion = "2023-06-01"

// Tool is a tool definition offered to the model.
type Tool struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the arguments; empty means
	// {"type":"object"}.
	Schema json.RawMessage
}

// Choice says how strongly the model is made to call the tool.
type Choice int

const (
	// ChoiceForced (the default) forces a call of the offered tool: OpenAI
	// tool_choice {"type":"function","function":{"name":...}}, Anthropic
	// {"type":"tool","name":...}. The model cannot answer in text.
	ChoiceForced Choice = iota
	// ChoiceAuto lets the model either call the tool or answer in text,
	// for example to say which information is missing.
	ChoiceAuto
)

// Request is one single-turn request: a system text, a user text and one
// tool.
type Request struct {
	System string
	User   string
	Tool   Tool
	Choice Choice
}

type openAIBody struct {
	Model string `json:"model"`
	// Exactly one of the two carries Config.MaxTokens (see TokensField).
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Messages            []openAIMessage `json:"messages"`
	Tools               []openAITool    `json:"tools"`
	ToolChoice          any             `json:"tool_choice"`
}

type openAIMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type anthropicBody struct {
	Model      string            `json:"model"`
	MaxTokens  int               `json:"max_tokens"`
	System     string            `json:"system,omitempty"`
	Messages   []openAIMessage   `json:"messages"`
	Tools      []anthropicTool   `json:"tools"`
	ToolChoice map[string]string `json:"tool_choice"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

const emptyObjectSchema = `{"type":"object"}`

// Encode encodes req in cfg's protocol: the body of one completion request.
func Encode(cfg Config, req Request) ([]byte, error) {
	if req.Tool.Name == "" {
		return nil, fmt.Errorf("model: request offers no tool; set Request.Tool.Name")
	}
	schema := req.Tool.Schema
	if len(bytes.TrimSpace(schema)) == 0 {
		schema = json.RawMessage(emptyObjectSchema)
	} else if !json.Valid(schema) {
		return nil, fmt.Errorf("model: tool %s: schema is not valid JSON", req.Tool.Name)
	}
	var v any
	switch cfg.Protocol {
	case ProtocolAnthropic:
		choice := map[string]string{"type": "tool", "name": req.Tool.Name}
		if req.Choice == ChoiceAuto {
			choice = map[string]string{"type": "auto"}
		}
		v = anthropicBody{
			Model: cfg.Model, MaxTokens: cfg.MaxTokens, System: req.System,
			Messages:   []openAIMessage{{Role: "user", Content: req.User}},
			Tools:      []anthropicTool{{Name: req.Tool.Name, Description: req.Tool.Description, InputSchema: schema}},
			ToolChoice: choice,
		}
	default:
		var choice any = map[string]any{"type": "function", "function": map[string]string{"name": req.Tool.Name}}
		if req.Choice == ChoiceAuto {
			choice = "auto"
		}
		var msgs []openAIMessage
		if req.System != "" {
			msgs = append(msgs, openAIMessage{Role: "system", Content: req.System})
		}
		b := openAIBody{
			Model:      cfg.Model,
			Messages:   append(msgs, openAIMessage{Role: "user", Content: req.User}),
			Tools:      []openAITool{{Type: "function", Function: openAIFunction{Name: req.Tool.Name, Description: req.Tool.Description, Parameters: schema}}},
			ToolChoice: choice,
		}
		if tokensField(cfg) == TokensMaxCompletionTokens {
			b.MaxCompletionTokens = cfg.MaxTokens
		} else {
			b.MaxTokens = cfg.MaxTokens
		}
		v = b
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("model: encode request: %w", err)
	}
	return b, nil
}

// EndpointURL is the full URL of the protocol's completion call.
func EndpointURL(cfg Config) string {
	base := strings.TrimRight(cfg.Endpoint, "/")
	switch cfg.Protocol {
	case ProtocolAnthropic:
		if strings.HasSuffix(base, "/v1/messages") {
			return base
		}
		if strings.HasSuffix(base, "/v1") {
			return base + "/messages"
		}
		return base + "/v1/messages"
	default:
		if strings.HasSuffix(base, "/chat/completions") {
			return base
		}
		return base + "/chat/completions"
	}
}
