package provider

import (
	"bytes"
	"encoding/json"
	"encoding/json/jsontext"
	"errors"
	"fmt"
)

// Cohere is the provider name of Cohere's v2 Chat API (POST /v2/chat).
const Cohere = "cohere"

// Cohere v2 chat. Calls are message.tool_calls with arguments as a JSON
// string. message.tool_plan is the model's plan before its calls, like
// reasoning: it is not visible text and never a source of calls recovered
// from text; neither is a content block of type thinking. finish_reason is
// precise (TOOL_CALL). A response that ended ERROR or TIMEOUT marks its
// calls truncated: the generation stopped before it finished.

type cohereFunction struct {
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
}

type cohereToolCall struct {
	ID       string         `json:"id"`
	Function cohereFunction `json:"function"`
}

type cohereContent struct {
	Type string     `json:"type"`
	Text wireString `json:"text"`
}

type cohereUsage struct {
	BilledUnits *struct {
		OutputTokens float64 `json:"output_tokens"`
	} `json:"billed_units"`
	Tokens *struct {
		OutputTokens float64 `json:"output_tokens"`
	} `json:"tokens"`
}

// outputTokens is the generated token count: tokens.output_tokens (what the
// model produced, the larger), else billed_units.output_tokens.
func (u *cohereUsage) outputTokens() int {
	switch {
	case u == nil:
		return 0
	case u.Tokens != nil && u.Tokens.OutputTokens > 0:
		return int(u.Tokens.OutputTokens)
	case u.BilledUnits != nil:
		return int(u.BilledUnits.OutputTokens)
	}
	return 0
}

type cohereBody struct {
	ID      string `json:"id"`
	Message *struct {
		Content   []cohereContent  `json:"content"`
		ToolCalls []cohereToolCall `json:"tool_calls"`
	} `json:"message"`
	FinishReason *string      `json:"finish_reason"`
	Usage        *cohereUsage `json:"usage"`
}

var errCohereShape = errors.New("provider: cohere: not a v2 chat response: expected message with finish_reason, or an error message")

func cohereWhole(body []byte, s *state) error {
	// An error body ({"id","message"} with HTTP 4xx/5xx) has a string
	// message, a response an object.
	var probe struct {
		Message jsontext.Value `json:"message"`
	}
	if err := unmarshal(Cohere, body, &probe); err != nil {
		return err
	}
	if probe.Message.Kind() == '"' {
		s.setError(&Error{Message: scalarString(probe.Message)})
		return nil
	}
	var b cohereBody
	if err := unmarshal(Cohere, body, &b); err != nil {
		return err
	}
	if b.Message == nil || b.FinishReason == nil {
		return errCohereShape
	}
	for _, tc := range b.Message.ToolCalls { // reject before changing anything
		if err := cohereArgsKind(tc.Function.Arguments); err != nil {
			return err
		}
	}
	s.id = b.ID
	for _, c := range b.Message.Content {
		if c.Type == "text" {
			s.text.WriteString(string(c.Text))
		}
	}
	for i, tc := range b.Message.ToolCalls {
		c := s.newCall(i)
		c.id, c.name = tc.ID, tc.Function.Name
		if err := c.addChatArgs(tc.Function.Arguments); err != nil {
			return fmt.Errorf("provider: cohere: tool call %s: %w", tc.Function.Name, err)
		}
	}
	s.outputTokens = b.Usage.outputTokens()
	s.cohereFinish(*b.FinishReason)
	return nil
}

// cohereArgsKind: arguments are a JSON string (or absent / null).
func cohereArgsKind(raw jsontext.Value) error {
	if len(raw) == 0 || raw.Kind() == '"' || raw.Kind() == 'n' {
		return nil
	}
	return fmt.Errorf("provider: cohere: tool call arguments must be a JSON string, got %.20s", raw)
}

// cohereFinish records finish_reason; ERROR and TIMEOUT cut the calls short.
func (s *state) cohereFinish(w string) {
	s.finish, s.providerFinish = cohereReason(w), w
	if w == "ERROR" || w == "TIMEOUT" {
		for _, c := range s.calls {
			c.truncWhy = "provider finish reason " + w + ": the generation stopped before it finished"
		}
	}
}

// cohereToolResult: {"role":"tool","tool_call_id":id,"content":[{"type":"document","document":{"data":...}}]}.
// data is the result's JSON text when the call ran, else the outcome Text.
func cohereToolResult(a Answer) (json.RawMessage, error) {
	id, err := a.requireID()
	if err != nil {
		return nil, err
	}
	data := a.Text
	if r := bytes.TrimSpace(a.Result); a.OK && !a.TextOnly && len(r) > 0 {
		data = string(r)
	}
	type document struct {
		Data string `json:"data"`
	}
	type content struct {
		Type     string   `json:"type"`
		Document document `json:"document"`
	}
	return marshalResult(struct {
		Role       string    `json:"role"`
		ToolCallID string    `json:"tool_call_id"`
		Content    []content `json:"content"`
	}{"tool", id, []content{{"document", document{data}}}})
}
