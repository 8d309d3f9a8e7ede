package provider

import (
	"encoding/json/jsontext"
	"errors"
	"fmt"
)

// Gemini Interactions stream (stream: true): SSE events, each a JSON object
// with its event_type, in either of the API's two revisions. Blocks are
// framed by index: content.start / content.delta / content.stop (a
// function_call delta carries the whole call, its arguments an object), or,
// from revision 2026-05-20, step.start / step.delta / step.stop (the
// function_call step opens with arguments {} and its arguments arrive as
// arguments_delta text). The terminal event is interaction.complete
// (interaction.completed), whose interaction.status is the finish, or an
// error event. interaction.start / created and the status_update events
// end nothing: a stream without its terminal event never completes.

type interEvent struct {
	EventType   *string        `json:"event_type"`
	Interaction *interaction   `json:"interaction"`
	Index       *int           `json:"index"`
	Content     jsontext.Value `json:"content"` // content.start
	Step        jsontext.Value `json:"step"`    // step.start
	Delta       jsontext.Value `json:"delta"`
	Error       jsontext.Value `json:"error"`
}

// interDelta is a content.delta / step.delta payload.
type interDelta struct {
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
	Text      jsontext.Value `json:"text"`
}

// interKnown reports the stream's event types, in both revisions.
func interKnown(t string) bool {
	switch t {
	case "interaction.start", "interaction.created", "interaction.status_update",
		"interaction.in_progress", "interaction.requires_action",
		"content.start", "content.delta", "content.stop",
		"step.start", "step.delta", "step.stop",
		"interaction.complete", "interaction.completed", "error":
		return true
	}
	return false
}

func interEventFn(ev []byte, s *state) error {
	if string(ev) == "[DONE]" {
		if s.done {
			return nil
		}
		return errors.New("provider: gemini-interactions: [DONE] is not an Interactions event (the stream ends at interaction.complete)")
	}
	var e interEvent
	if err := unmarshal(GeminiInteractions, ev, &e); err != nil {
		return err
	}
	if e.EventType == nil || !interKnown(*e.EventType) {
		what := "no event_type"
		if e.EventType != nil {
			what = fmt.Sprintf("event type %q", *e.EventType)
		}
		return fmt.Errorf("provider: gemini-interactions: %s is not an Interactions stream event", what)
	}
	if s.done {
		return ErrAfterTerminal
	}
	switch t := *e.EventType; t {
	case "interaction.start", "interaction.created":
		if in := e.Interaction; in != nil {
			s.id, s.model = orKeep(in.ID, s.id), orKeep(in.Model, s.model)
		}
	case "content.start", "step.start":
		return s.interStart(t, &e)
	case "content.delta", "step.delta":
		return s.interDeltaEvent(t, &e)
	case "content.stop", "step.stop":
		if e.Index == nil {
			return fmt.Errorf("provider: gemini-interactions: %s without index", t)
		}
		if c := s.chatByIndex[*e.Index]; c != nil {
			c.open = false
		}
	case "interaction.complete", "interaction.completed":
		if e.Interaction == nil || e.Interaction.Status == nil {
			return fmt.Errorf("provider: gemini-interactions: %s without interaction.status", t)
		}
		if err := s.interCompleteBlocks(e.Interaction); err != nil {
			return err
		}
		if err := s.interComplete(e.Interaction); err != nil {
			return err
		}
		s.done = true
	case "error":
		er := decodeError(e.Error)
		if er == nil {
			er = &Error{Type: "error"}
		}
		s.setError(er)
	}
	return nil // the status_update events: the status that counts comes last
}

// interCompleteBlocks reads the blocks a terminal interaction carries when
// the stream started none itself (a producer relaying only the final
// event): never dropped in silence. When the events carried blocks, they
// are the response, and the terminal event's copies are not read twice.
func (s *state) interCompleteBlocks(in *interaction) error {
	if len(s.interKinds) > 0 {
		return nil
	}
	blocks := append(append([]interBlock(nil), in.Outputs...), in.Steps...)
	for i := range blocks {
		if err := blocks[i].check(); err != nil {
			return err
		}
	}
	for i := range blocks {
		if _, err := s.interBlock(i, &blocks[i]); err != nil {
			return err
		}
	}
	return nil
}

func orKeep(v, old string) string {
	if v != "" {
		return v
	}
	return old
}

// interStart opens the block at index: a function_call starts a call.
func (s *state) interStart(t string, e *interEvent) error {
	raw := e.Content
	if t == "step.start" {
		raw = e.Step
	}
	if e.Index == nil || raw.Kind() != '{' {
		return fmt.Errorf("provider: gemini-interactions: %s without index and its block object", t)
	}
	if _, ok := s.interKinds[*e.Index]; ok {
		return fmt.Errorf("provider: gemini-interactions: %s for index %d, which already started", t, *e.Index)
	}
	var b interBlock
	if err := unmarshal(GeminiInteractions, raw, &b); err != nil {
		return err
	}
	c, err := s.interBlock(*e.Index, &b)
	if err != nil {
		return err
	}
	if s.interKinds == nil {
		s.interKinds, s.chatByIndex = map[int]string{}, map[int]*callBuf{}
	}
	s.interKinds[*e.Index] = b.Type
	if c != nil {
		c.open = true
		s.chatByIndex[*e.Index] = c
	}
	return nil
}

// interDeltaEvent applies one delta to the block at its index.
func (s *state) interDeltaEvent(t string, e *interEvent) error {
	if e.Index == nil || e.Delta.Kind() != '{' {
		return fmt.Errorf("provider: gemini-interactions: %s without index and its delta object", t)
	}
	kind, ok := s.interKinds[*e.Index]
	if !ok {
		return fmt.Errorf("provider: gemini-interactions: %s for index %d, which no start opened", t, *e.Index)
	}
	var d interDelta
	if err := unmarshal(GeminiInteractions, e.Delta, &d); err != nil {
		return err
	}
	c := s.chatByIndex[*e.Index]
	switch d.Type {
	case "text":
		if kind != "text" && kind != "model_output" {
			return fmt.Errorf("provider: gemini-interactions: text delta for index %d, a %s block", *e.Index, kind)
		}
		return s.interText(d.Text)
	case "function_call", "arguments_delta":
		switch {
		case c == nil:
			return fmt.Errorf("provider: gemini-interactions: %s delta for index %d, a %s block", d.Type, *e.Index, kind)
		case !c.open:
			return fmt.Errorf("provider: gemini-interactions: %s delta for index %d after its stop", d.Type, *e.Index)
		}
		c.id, c.name = orKeep(d.ID, c.id), orKeep(d.Name, c.name)
		if d.Type == "function_call" { // the whole call, arguments an object
			b := interBlock{Type: d.Type, Name: c.name, Arguments: d.Arguments}
			if err := b.check(); err != nil {
				return err
			}
			return c.interArgs(&b)
		}
		if k := d.Arguments.Kind(); k != '"' {
			return fmt.Errorf("provider: gemini-interactions: arguments_delta for index %d: arguments must be a JSON string", *e.Index)
		}
		args, err := appendJSONString(c.args, d.Arguments)
		if err != nil {
			return fmt.Errorf("provider: gemini-interactions: arguments_delta: %w", err)
		}
		c.args, c.gotDelta = args, true
	}
	return nil // thought summaries and signatures, annotations, images, built-in tools
}
