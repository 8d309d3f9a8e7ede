package provider

import (
	"encoding/json/jsontext"
	"errors"
	"fmt"
)

// Cohere v2 chat stream (stream: true): SSE events, each a JSON object with
// its type. tool-call-start opens call index with its id and name,
// tool-call-delta appends argument text, tool-call-end closes it;
// content-delta carries text (or thinking, which is not text); tool-plan-delta
// the plan (not text). message-end, with delta.finish_reason and usage, is
// the terminal event.

type cohereEvent struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	Index *int   `json:"index"`
	Delta *struct {
		// message-start carries arrays here, the other events one object.
		Message *struct {
			ToolCalls jsontext.Value `json:"tool_calls"`
			Content   jsontext.Value `json:"content"`
		} `json:"message"`
		FinishReason *string      `json:"finish_reason"`
		Usage        *cohereUsage `json:"usage"`
		Error        *wireString  `json:"error"`
	} `json:"delta"`
}

// cohereKnown reports the v2 chat stream event types. citation-*, debug,
// content-end and tool-plan-delta carry nothing a call or the text depends on.
func cohereKnown(t string) bool {
	switch t {
	case "message-start", "content-start", "content-delta", "content-end", "tool-plan-delta",
		"tool-call-start", "tool-call-delta", "tool-call-end", "citation-start", "citation-end", "debug", "message-end":
		return true
	}
	return false
}

func cohereStreamEvent(ev []byte, s *state) error {
	var e cohereEvent
	if err := unmarshal(Cohere, ev, &e); err != nil {
		return err
	}
	if !cohereKnown(e.Type) {
		return fmt.Errorf("provider: cohere: event type %q is not a v2 chat stream event", e.Type)
	}
	if s.done {
		return ErrAfterTerminal
	}
	switch e.Type {
	case "message-start":
		if e.ID != "" {
			s.id = e.ID
		}
	case "tool-call-start":
		tc, err := e.toolCall()
		if err != nil {
			return err
		}
		if s.chatByIndex[*e.Index] != nil {
			return fmt.Errorf("provider: cohere: tool-call-start for index %d, which already started", *e.Index)
		}
		args, err := cohereArgs(tc.Function.Arguments, nil)
		if err != nil {
			return err
		}
		if s.chatByIndex == nil {
			s.chatByIndex = map[int]*callBuf{}
		}
		c := s.newCall(*e.Index)
		c.id, c.name, c.open, c.args = tc.ID, tc.Function.Name, true, args
		s.chatByIndex[*e.Index] = c
	case "tool-call-delta":
		tc, err := e.toolCall()
		if err != nil {
			return err
		}
		c := s.chatByIndex[*e.Index]
		switch {
		case c == nil:
			return fmt.Errorf("provider: cohere: tool-call-delta for index %d, which no tool-call-start opened", *e.Index)
		case !c.open:
			return fmt.Errorf("provider: cohere: tool-call-delta for index %d after its tool-call-end", *e.Index)
		}
		args, err := cohereArgs(tc.Function.Arguments, c.args)
		if err != nil {
			return err
		}
		c.args = args
	case "tool-call-end":
		if e.Index == nil {
			return errors.New("provider: cohere: tool-call-end without index")
		}
		if c := s.chatByIndex[*e.Index]; c != nil {
			c.open = false
		}
	case "content-start", "content-delta":
		if d := e.Delta; d != nil && d.Message != nil && len(d.Message.Content) > 0 {
			var c struct {
				Text *wireString `json:"text"` // thinking deltas have none
			}
			if err := unmarshal(Cohere, d.Message.Content, &c); err != nil {
				return err
			}
			if c.Text != nil {
				s.text.WriteString(string(*c.Text))
			}
		}
	case "message-end":
		if d := e.Delta; d != nil {
			s.outputTokens = d.Usage.outputTokens()
			if d.Error != nil && *d.Error != "" {
				s.err = &Error{Type: "error", Message: string(*d.Error)}
			}
			if d.FinishReason != nil {
				s.cohereFinish(*d.FinishReason)
			}
		}
		s.done = true
	}
	return nil
}

// toolCall returns a tool-call-start or -delta event's call, with its index.
func (e *cohereEvent) toolCall() (*cohereToolCall, error) {
	if e.Index == nil {
		return nil, fmt.Errorf("provider: cohere: %s without index", e.Type)
	}
	if e.Delta == nil || e.Delta.Message == nil || e.Delta.Message.ToolCalls.Kind() != '{' {
		return nil, fmt.Errorf("provider: cohere: %s without the delta.message.tool_calls object", e.Type)
	}
	var tc cohereToolCall
	if err := unmarshal(Cohere, e.Delta.Message.ToolCalls, &tc); err != nil {
		return nil, err
	}
	return &tc, nil
}

// cohereArgs appends an arguments fragment, a JSON string, to args.
func cohereArgs(raw jsontext.Value, args []byte) ([]byte, error) {
	if err := cohereArgsKind(raw); err != nil {
		return nil, err
	}
	if len(raw) == 0 || raw.Kind() == 'n' {
		return args, nil
	}
	out, err := appendJSONString(args, raw)
	if err != nil {
		return nil, fmt.Errorf("provider: cohere: tool call arguments: %w", err)
	}
	return out, nil
}
