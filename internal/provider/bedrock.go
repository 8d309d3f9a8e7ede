package provider

import (
	"bytes"
	"encoding/json"
	"encoding/json/jsontext"
	"errors"
	"fmt"
)

// BedrockConverse is the provider name of the AWS Bedrock Converse and
// ConverseStream APIs.
const BedrockConverse = "bedrock-converse"

// AWS Bedrock Converse (POST /model/{modelId}/converse). Client calls are
// toolUse content blocks whose input is a JSON object (type server_tool_use
// blocks run on Bedrock's side and are not client calls). stopReason is
// precise: tool_use says calls, end_turn with toolUse blocks stays stop.
// A response the guardrail or content filter stopped (guardrail_intervened,
// content_filtered) keeps its text but its calls are withheld: they are
// reported as a provider error naming them, and never reach a gate.

type bedrockToolUse struct {
	ToolUseID string         `json:"toolUseId"`
	Name      string         `json:"name"`
	Input     jsontext.Value `json:"input"`
	// Type server_tool_use: a tool Bedrock runs itself, its result in a
	// toolResult block of the same response; not a client call.
	Type string `json:"type"`
}

// bedrockServerTool is the toolUse type of a tool Bedrock runs itself.
const bedrockServerTool = "server_tool_use"

type bedrockBlock struct {
	Text    *wireString     `json:"text"`
	ToolUse *bedrockToolUse `json:"toolUse"`
	// reasoningContent, image, document, citationsContent, ... are not
	// client calls nor visible text.
}

type bedrockUsage struct {
	OutputTokens int `json:"outputTokens"`
}

type bedrockBody struct {
	Output *struct {
		Message *struct {
			Content []bedrockBlock `json:"content"`
		} `json:"message"`
	} `json:"output"`
	StopReason *string       `json:"stopReason"`
	Usage      *bedrockUsage `json:"usage"`
	// An error body (HTTP 4xx/5xx): {"message": "..."}, the type in the
	// x-amzn-ErrorType header or "__type".
	Message *wireString `json:"message"`
	Type    string      `json:"__type"`
}

var errBedrockShape = errors.New("provider: bedrock-converse: not a Converse response: expected output with stopReason, or an error message")

func bedrockWhole(body []byte, s *state) error {
	var b bedrockBody
	if err := unmarshal(BedrockConverse, body, &b); err != nil {
		return err
	}
	if b.StopReason == nil { // required in every Converse response
		if b.Output == nil && b.Message != nil {
			s.setError(&Error{Type: b.Type, Message: string(*b.Message)})
			return nil
		}
		return errBedrockShape
	}
	if b.Output != nil && b.Output.Message != nil {
		for i, blk := range b.Output.Message.Content {
			if blk.Text != nil {
				s.text.WriteString(string(*blk.Text))
			}
			if tu := blk.ToolUse; tu != nil && tu.Type != bedrockServerTool {
				c := s.newCall(i)
				c.id, c.name = tu.ToolUseID, tu.Name
				if err := c.bedrockInput(tu.Input); err != nil {
					return err
				}
			}
		}
	}
	if b.Usage != nil {
		s.outputTokens = b.Usage.OutputTokens
	}
	if b.StopReason != nil {
		s.bedrockStopReason(*b.StopReason)
	}
	return nil
}

// bedrockInput keeps a toolUse input object as its canonical JSON. Input
// that is not an object (the API documents an object) is kept as its raw
// bytes, for the parse gate to refuse that call alone.
func (c *callBuf) bedrockInput(raw jsontext.Value) error {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		c.args, c.object = []byte("{}"), true
	case raw.Kind() == '{':
		obj, err := objectArgs(raw)
		if err != nil {
			return fmt.Errorf("provider: bedrock-converse: toolUse %s input: %w", c.name, err)
		}
		c.args, c.object = obj, true
	default:
		c.args = append([]byte(nil), raw...)
	}
	return nil
}

// bedrockStopReason records stopReason; when a guardrail or content filter
// stopped the output, the calls are withheld as a provider error.
func (s *state) bedrockStopReason(w string) {
	s.finish, s.providerFinish = bedrockReason(w), w
	if s.finish == ReasonContentFilter && len(s.calls) > 0 {
		s.withhold(w, "stopReason "+w+": Bedrock's guardrail or content filter stopped the output (see the guardrail trace)")
	}
}

// withhold drops the response's calls and records why as a provider error
// naming them: they never reach a gate.
func (s *state) withhold(code, why string) {
	var names []string
	for _, c := range s.ordered() {
		names = append(names, c.name)
	}
	s.err = withheldError(code, why, names)
	s.calls, s.chatByIndex = nil, nil
}

// bedrockToolResult: the content block
// {"toolResult":{"toolUseId":id,"content":[{"json":Result}] or [{"text":Text}],"status":"success"|"error"}}.
// A result that is a JSON object goes as json, anything else as text. All
// results of one response belong in ONE user message
// ({"role":"user","content":[...]}); the caller wraps the blocks.
func bedrockToolResult(a Answer) (json.RawMessage, error) {
	id, err := a.requireID()
	if err != nil {
		return nil, err
	}
	type block struct {
		JSON json.RawMessage `json:"json,omitempty"`
		Text *string         `json:"text,omitempty"`
	}
	content := block{Text: &a.Text}
	if r := bytes.TrimSpace(a.Result); a.OK && !a.TextOnly && len(r) > 0 && r[0] == '{' && json.Valid(r) {
		content = block{JSON: r}
	}
	status := "success"
	if !a.OK {
		status = "error"
	}
	type toolResult struct {
		ToolUseID string  `json:"toolUseId"`
		Content   []block `json:"content"`
		Status    string  `json:"status"`
	}
	return marshalResult(struct {
		ToolResult toolResult `json:"toolResult"`
	}{toolResult{id, []block{content}, status}})
}
