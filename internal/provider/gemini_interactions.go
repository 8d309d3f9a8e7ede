package provider

import (
	"encoding/json"
	"encoding/json/jsontext"
	"errors"
	"fmt"
)

// GeminiInteractions is the provider name of Google's Gemini Interactions
// API (POST /v1beta/interactions), whose body and events differ from
// generateContent's (Gemini): its own name, so that neither is read by a
// guess at the other's shape.
const GeminiInteractions = "gemini-interactions"

// Gemini Interactions API. A whole body is an interaction: status, and its
// output blocks in outputs (or, from API revision 2026-05-20, steps, whose
// model_output steps hold the text blocks). Client calls are function_call
// blocks with an id, a name and arguments as an object; thought blocks are
// not text, and the built-in tools' *_call / *_result blocks (Google Search,
// code execution, URL context, file search, Maps, MCP servers) ran on
// Google's side and are no calls. status is the finish: requires_action the
// calls, completed stop (tool_calls when it holds calls), incomplete length,
// failed error; a failed, cancelled or unfinished (in_progress) interaction
// marks its calls truncated.

// interBlock is one output block or step, its members kept raw: only the
// members of its type are decoded (a built-in tool's block may use them
// otherwise).
type interBlock struct {
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
	Text      jsontext.Value `json:"text"`
	Content   jsontext.Value `json:"content"`
}

type interUsage struct {
	TotalOutputTokens float64 `json:"total_output_tokens"`
}

type interaction struct {
	ID      string         `json:"id"`
	Model   string         `json:"model"`
	Status  *string        `json:"status"`
	Outputs []interBlock   `json:"outputs"`
	Steps   []interBlock   `json:"steps"`
	Usage   *interUsage    `json:"usage"`
	Error   jsontext.Value `json:"error"`
}

var errInterShape = errors.New("provider: gemini-interactions: not an interaction: expected status, or an error")

func interWhole(body []byte, s *state) error {
	var in interaction
	if err := unmarshal(GeminiInteractions, body, &in); err != nil {
		return err
	}
	if in.Status == nil {
		if e := decodeError(in.Error); e != nil {
			s.setError(e)
			return nil
		}
		return errInterShape
	}
	if err := s.interCompleteBlocks(&in); err != nil {
		return err
	}
	return s.interComplete(&in)
}

// check refuses a function_call whose arguments are not an object.
func (b *interBlock) check() error {
	if b.Type != "function_call" {
		return nil
	}
	if k := b.Arguments.Kind(); len(b.Arguments) > 0 && k != '{' && k != 'n' {
		return fmt.Errorf("provider: gemini-interactions: function_call %s arguments must be an object, got %.20s", b.Name, b.Arguments)
	}
	return nil
}

// interBlock records a text block's text (or a model_output step's text
// blocks) or starts a function_call whose arguments object stands until
// arguments_delta text replaces it. Other blocks carry nothing a call or
// the text depends on.
func (s *state) interBlock(index int, b *interBlock) (*callBuf, error) {
	switch b.Type {
	case "text":
		return nil, s.interText(b.Text)
	case "model_output":
		if b.Content.Kind() != '[' {
			return nil, nil
		}
		var parts []interBlock
		if err := unmarshal(GeminiInteractions, b.Content, &parts); err != nil {
			return nil, err
		}
		for i := range parts {
			if parts[i].Type == "text" {
				if err := s.interText(parts[i].Text); err != nil {
					return nil, err
				}
			}
		}
	case "function_call":
		if err := b.check(); err != nil {
			return nil, err
		}
		c := s.newCall(index)
		c.id, c.name = b.ID, b.Name
		return c, c.interArgs(b)
	}
	return nil, nil
}

// interArgs sets a function_call's arguments object ({} when absent).
func (c *callBuf) interArgs(b *interBlock) error {
	if c.startInput == nil {
		c.startInput = []byte("{}")
	}
	if len(b.Arguments) == 0 || b.Arguments.Kind() == 'n' {
		return nil
	}
	obj, err := objectArgs(b.Arguments)
	if err != nil {
		return fmt.Errorf("provider: gemini-interactions: function_call %s arguments: %w", b.Name, err)
	}
	c.startInput = obj
	return nil
}

func (s *state) interText(raw jsontext.Value) error {
	if len(raw) == 0 || raw.Kind() == 'n' {
		return nil
	}
	var t wireString
	if err := unmarshal(GeminiInteractions, raw, &t); err != nil {
		return err
	}
	s.text.WriteString(string(t))
	return nil
}

// interComplete takes the interaction's id, model, usage, error and status.
func (s *state) interComplete(in *interaction) error {
	if in.ID != "" {
		s.id = in.ID
	}
	if in.Model != "" {
		s.model = in.Model
	}
	if in.Usage != nil {
		s.outputTokens = int(in.Usage.TotalOutputTokens)
	}
	if e := decodeError(in.Error); e != nil {
		s.err = e
	}
	if in.Status != nil {
		s.interFinish(*in.Status)
	}
	return nil
}

// interReason maps an interaction status (vercel/ai's mapping).
func interReason(status string) Reason {
	switch status {
	case "completed":
		return ReasonStop
	case "requires_action":
		return ReasonToolCalls
	case "incomplete":
		return ReasonLength
	case "failed":
		return ReasonError
	}
	return ReasonUnknown // cancelled, in_progress and future words
}

// interFinish records the status; an interaction that failed, was cancelled
// or has not finished cuts its calls short.
func (s *state) interFinish(status string) {
	s.finish, s.providerFinish = interReason(status), status
	switch status {
	case "failed", "cancelled", "in_progress":
		for _, c := range s.calls {
			c.truncWhy = "provider status " + status + ": the interaction stopped before it finished"
		}
	}
}

// interToolResult: the function_result content block
// {"type":"function_result","call_id":id,"name":tool,"result":Text,"is_error":!OK},
// sent as (an item of) the next interaction's input. result is the outcome
// Text: the executor's result JSON when the call ran; a string is a result
// every API revision takes.
func interToolResult(a Answer) (json.RawMessage, error) {
	id, err := a.requireID()
	if err != nil {
		return nil, err
	}
	return marshalResult(struct {
		Type    string `json:"type"`
		CallID  string `json:"call_id"`
		Name    string `json:"name,omitempty"`
		Result  string `json:"result"`
		IsError bool   `json:"is_error"`
	}{"function_result", id, a.Tool, a.Text, !a.OK})
}
