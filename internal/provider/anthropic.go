package provider

import (
	"encoding/json"
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"strings"
)

// Anthropic is the provider name of the Anthropic Messages API.
const Anthropic = "anthropic"

// Anthropic Messages API. Client calls are tool_use blocks. server_tool_use
// and mcp_tool_use blocks run on Anthropic's side and come with their own
// results, so they are not client calls. stop_reason end_turn stays stop even
// when tool_use blocks are present (programmatic tool calling records calls
// its code already made): Anthropic's reasons are precise.

type anthBlock struct {
	Type  string         `json:"type"`
	ID    string         `json:"id"`
	Name  string         `json:"name"`
	Input jsontext.Value `json:"input"`
	Text  wireString     `json:"text"`
}

type anthUsage struct {
	OutputTokens int `json:"output_tokens"`
}

type anthMessage struct {
	Type       string         `json:"type"`
	ID         string         `json:"id"`
	Model      string         `json:"model"`
	Content    []anthBlock    `json:"content"`
	StopReason *string        `json:"stop_reason"`
	Usage      *anthUsage     `json:"usage"`
	Error      jsontext.Value `json:"error"`
}

type anthEventBody struct {
	Type         string       `json:"type"`
	Message      *anthMessage `json:"message"`
	Index        int          `json:"index"`
	ContentBlock *anthBlock   `json:"content_block"`
	Delta        *struct {
		Type        string         `json:"type"`
		Text        wireString     `json:"text"`
		PartialJSON jsontext.Value `json:"partial_json"`
		StopReason  *string        `json:"stop_reason"`
	} `json:"delta"`
	Usage *anthUsage     `json:"usage"`
	Error jsontext.Value `json:"error"`
}

var errAnthShape = errors.New("provider: anthropic: not a Messages API response: expected content, stop_reason or error")

func anthWhole(body []byte, s *state) error {
	var m anthMessage
	if err := unmarshal(Anthropic, body, &m); err != nil {
		return err
	}
	if e := decodeError(m.Error); e != nil {
		s.setError(e)
		return nil
	}
	if m.Content == nil && m.StopReason == nil {
		return errAnthShape
	}
	return s.anthMessage(&m)
}

func (s *state) anthMessage(m *anthMessage) error {
	if m.ID != "" {
		s.id = m.ID
	}
	if m.Model != "" {
		s.model = m.Model
	}
	if m.Usage != nil {
		s.outputTokens = m.Usage.OutputTokens
	}
	for i := range m.Content {
		if _, err := s.anthBlock(i, &m.Content[i]); err != nil {
			return err
		}
	}
	if m.StopReason != nil {
		s.finish, s.providerFinish = anthReason(*m.StopReason), *m.StopReason
	}
	return nil
}

// anthBlock records a text block's text or starts a tool_use call whose
// input object is the arguments until input_json_delta text replaces it.
func (s *state) anthBlock(index int, b *anthBlock) (*callBuf, error) {
	switch b.Type {
	case "text":
		s.text.WriteString(string(b.Text))
	case "tool_use":
		c := s.newCall(index)
		c.id, c.name = b.ID, b.Name
		c.startInput = []byte("{}")
		if len(b.Input) > 0 && string(b.Input) != "null" {
			obj, err := objectArgs(b.Input)
			if err != nil {
				return nil, fmt.Errorf("provider: anthropic: tool_use %s input: %w", b.Name, err)
			}
			c.startInput = obj
		}
		return c, nil
	}
	return nil, nil
}

func anthEvent(ev []byte, s *state) error {
	var e anthEventBody
	if err := unmarshal(Anthropic, ev, &e); err != nil {
		return err
	}
	if e.Type != "ping" && e.Type != "error" && !strings.HasPrefix(e.Type, "message_") && !strings.HasPrefix(e.Type, "content_block_") {
		// Unknown message_* and content_block_* events are new features and are ignored.
		return fmt.Errorf("provider: anthropic: event type %q is not a Messages API stream event", e.Type)
	}
	if s.done && e.Type != "ping" {
		return ErrAfterTerminal
	}
	switch e.Type {
	case "message_start":
		if e.Message == nil {
			return errors.New("provider: anthropic: message_start without message")
		}
		return s.anthMessage(e.Message)
	case "content_block_start":
		if e.ContentBlock == nil {
			return errors.New("provider: anthropic: content_block_start without content_block")
		}
		c, err := s.anthBlock(e.Index, e.ContentBlock)
		if c != nil {
			c.open = true
			if s.chatByIndex == nil {
				s.chatByIndex = map[int]*callBuf{}
			}
			s.chatByIndex[e.Index] = c
		}
		return err
	case "content_block_delta":
		if e.Delta == nil {
			return errors.New("provider: anthropic: content_block_delta without delta")
		}
		switch e.Delta.Type {
		case "text_delta":
			s.text.WriteString(string(e.Delta.Text))
		case "input_json_delta":
			// Deltas of server_tool_use blocks have no call and are dropped.
			c := s.chatByIndex[e.Index]
			if c == nil || len(e.Delta.PartialJSON) == 0 || string(e.Delta.PartialJSON) == `""` {
				return nil
			}
			args, err := appendJSONString(c.args, e.Delta.PartialJSON)
			if err != nil {
				return fmt.Errorf("provider: anthropic: input_json_delta: %w", err)
			}
			c.args, c.gotDelta = args, true
		}
	case "content_block_stop":
		if c := s.chatByIndex[e.Index]; c != nil {
			c.open = false
		}
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != nil {
			s.finish, s.providerFinish = anthReason(*e.Delta.StopReason), *e.Delta.StopReason
		}
		if e.Usage != nil && e.Usage.OutputTokens > 0 {
			s.outputTokens = e.Usage.OutputTokens
		}
	case "message_stop":
		s.done = true
	case "error":
		er := decodeError(e.Error)
		if er == nil {
			er = &Error{Type: "error"}
		}
		s.setError(er)
	}
	return nil
}

// anthToolResult: the content block
// {"type":"tool_result","tool_use_id":id,"content":Text,"is_error":!OK}. All
// results of one response belong in ONE user message
// ({"role":"user","content":[...]}); the caller wraps the blocks.
func anthToolResult(a Answer) (json.RawMessage, error) {
	id, err := a.requireID()
	if err != nil {
		return nil, err
	}
	return marshalResult(struct {
		Type      string `json:"type"`
		ToolUseID string `json:"tool_use_id"`
		Content   string `json:"content"`
		IsError   bool   `json:"is_error"`
	}{"tool_result", id, a.Text, !a.OK})
}
