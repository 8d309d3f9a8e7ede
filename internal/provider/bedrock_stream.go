package provider

import (
	"encoding/json/jsontext"
	"errors"
	"fmt"
)

// Bedrock ConverseStream events, each wrapped with its type as the only key
// ({"contentBlockDelta":{...}}): the JSON form of the AWS SDKs, and what
// `toolgate publish` makes of the binary event-stream framing
// (eventstream.go). Calls are toolUse blocks: contentBlockStart names them,
// contentBlockDelta appends input text, contentBlockStop closes them.
//
// The stream ends with two events: messageStop (the stopReason) and
// metadata (the usage). AWS sends messageStop, then metadata last; vercel/ai
// and producers relaying its recordings send metadata, then messageStop, or
// no metadata at all. Either order completes the stream at the second of
// the two; a stream at messageStop whose metadata is still missing has all
// a response needs (AwaitsOptional): the caller settles it after a short
// grace (Settle), since its output token count, for judging the calls
// against the requested cap, can only come with metadata. Each of the two
// is recognizable on its own (MayEnd: accumulate probes each event alone).
// Only metadata may follow messageStop, only messageStop may follow
// metadata. An exception event ends a stream with that error.

type bedrockIndex struct {
	ContentBlockIndex *int `json:"contentBlockIndex"`
}

type bedrockEvent struct {
	MessageStart      jsontext.Value `json:"messageStart"`
	ContentBlockStart *struct {
		bedrockIndex
		Start *struct {
			ToolUse *struct {
				ToolUseID string `json:"toolUseId"`
				Name      string `json:"name"`
				Type      string `json:"type"`
			} `json:"toolUse"`
		} `json:"start"`
	} `json:"contentBlockStart"`
	ContentBlockDelta *struct {
		bedrockIndex
		Delta *struct {
			Text    *wireString `json:"text"`
			ToolUse *struct {
				Input jsontext.Value `json:"input"`
			} `json:"toolUse"`
		} `json:"delta"`
	} `json:"contentBlockDelta"`
	ContentBlockStop *bedrockIndex `json:"contentBlockStop"`
	MessageStop      *struct {
		StopReason *string `json:"stopReason"`
	} `json:"messageStop"`
	Metadata *struct {
		Usage *bedrockUsage `json:"usage"`
	} `json:"metadata"`
	// ConverseStreamOutput's exception members, and the event-stream
	// framing's error message.
	InternalServerException     jsontext.Value `json:"internalServerException"`
	ModelStreamErrorException   jsontext.Value `json:"modelStreamErrorException"`
	ValidationException         jsontext.Value `json:"validationException"`
	ThrottlingException         jsontext.Value `json:"throttlingException"`
	ServiceUnavailableException jsontext.Value `json:"serviceUnavailableException"`
	Error                       jsontext.Value `json:"error"`
}

var errBedrockEvent = errors.New("provider: bedrock-converse: not a ConverseStream event: expected one of messageStart, contentBlockStart, contentBlockDelta, contentBlockStop, messageStop, metadata or an exception, as the only key")

// exception returns the exception an event carries, with its type.
func (e *bedrockEvent) exception() (string, jsontext.Value) {
	for _, x := range []struct {
		name string
		v    jsontext.Value
	}{
		{"internalServerException", e.InternalServerException}, {"modelStreamErrorException", e.ModelStreamErrorException},
		{"validationException", e.ValidationException}, {"throttlingException", e.ThrottlingException},
		{"serviceUnavailableException", e.ServiceUnavailableException}, {"error", e.Error},
	} {
		if len(x.v) > 0 {
			return x.name, x.v
		}
	}
	return "", nil
}

// members counts the event's known members; a valid event has exactly one.
func (e *bedrockEvent) members() int {
	n := 0
	for _, present := range []bool{
		len(e.MessageStart) > 0, e.ContentBlockStart != nil, e.ContentBlockDelta != nil, e.ContentBlockStop != nil,
		e.MessageStop != nil, e.Metadata != nil, len(e.InternalServerException) > 0, len(e.ModelStreamErrorException) > 0,
		len(e.ValidationException) > 0, len(e.ThrottlingException) > 0, len(e.ServiceUnavailableException) > 0, len(e.Error) > 0,
	} {
		if present {
			n++
		}
	}
	return n
}

func blockIndex(what string, i *bedrockIndex) (int, error) {
	if i == nil || i.ContentBlockIndex == nil {
		return 0, fmt.Errorf("provider: bedrock-converse: %s without contentBlockIndex", what)
	}
	return *i.ContentBlockIndex, nil
}

func bedrockStreamEvent(ev []byte, s *state) error {
	var e bedrockEvent
	if err := unmarshal(BedrockConverse, ev, &e); err != nil {
		return err
	}
	if e.members() != 1 {
		return errBedrockEvent
	}
	if s.done {
		return ErrAfterTerminal
	}
	if name, raw := e.exception(); name != "" {
		er := decodeError(raw)
		if er == nil {
			er = &Error{}
		}
		if er.Type == "" {
			er.Type = name
		}
		s.setError(er)
		return nil
	}
	if s.bedrockStop && e.Metadata == nil {
		return errors.New("provider: bedrock-converse: only metadata may follow messageStop")
	}
	if s.bedrockMeta && e.MessageStop == nil {
		return errors.New("provider: bedrock-converse: only messageStop may follow metadata")
	}
	if e.MessageStop != nil && (e.MessageStop.StopReason == nil || *e.MessageStop.StopReason == "") {
		return errors.New("provider: bedrock-converse: messageStop without stopReason")
	}
	switch {
	case len(e.MessageStart) > 0:
	case e.ContentBlockStart != nil:
		return s.bedrockBlockStart(&e)
	case e.ContentBlockDelta != nil:
		return s.bedrockDelta(&e)
	case e.ContentBlockStop != nil:
		i, err := blockIndex("contentBlockStop", e.ContentBlockStop)
		if err != nil {
			return err
		}
		if c := s.chatByIndex[i]; c != nil {
			c.open = false
		}
	case e.MessageStop != nil:
		s.bedrockStopReason(*e.MessageStop.StopReason)
		s.bedrockStop = true
		s.done = s.bedrockMeta
	case e.Metadata != nil:
		if u := e.Metadata.Usage; u != nil {
			s.outputTokens = u.OutputTokens
		}
		s.bedrockMeta = true
		s.done = s.bedrockStop
	}
	return nil
}

func (s *state) bedrockBlockStart(e *bedrockEvent) error {
	b := e.ContentBlockStart
	i, err := blockIndex("contentBlockStart", &b.bedrockIndex)
	if err != nil {
		return err
	}
	if b.Start == nil || b.Start.ToolUse == nil {
		return nil // a text, reasoning or other block
	}
	if s.chatByIndex[i] != nil {
		return fmt.Errorf("provider: bedrock-converse: contentBlockStart for block %d, which already started", i)
	}
	if s.chatByIndex == nil {
		s.chatByIndex = map[int]*callBuf{}
	}
	if b.Start.ToolUse.Type == bedrockServerTool {
		// Bedrock runs it: its input deltas are read into a call that is
		// not among the response's calls.
		s.chatByIndex[i] = &callBuf{key: i, open: true}
		return nil
	}
	c := s.newCall(i)
	c.id, c.name, c.open = b.Start.ToolUse.ToolUseID, b.Start.ToolUse.Name, true
	s.chatByIndex[i] = c
	return nil
}

func (s *state) bedrockDelta(e *bedrockEvent) error {
	d := e.ContentBlockDelta
	i, err := blockIndex("contentBlockDelta", &d.bedrockIndex)
	if err != nil {
		return err
	}
	if d.Delta == nil {
		return errors.New("provider: bedrock-converse: contentBlockDelta without delta")
	}
	if tu := d.Delta.ToolUse; tu != nil {
		c := s.chatByIndex[i]
		switch {
		case c == nil:
			return fmt.Errorf("provider: bedrock-converse: toolUse input for block %d, which no contentBlockStart opened as toolUse", i)
		case !c.open:
			return fmt.Errorf("provider: bedrock-converse: toolUse input for block %d after its contentBlockStop", i)
		case len(tu.Input) == 0 || tu.Input.Kind() != '"':
			return fmt.Errorf("provider: bedrock-converse: toolUse input of block %d must be a JSON string", i)
		}
		args, err := appendJSONString(c.args, tu.Input)
		if err != nil {
			return fmt.Errorf("provider: bedrock-converse: toolUse input: %w", err)
		}
		c.args = args
		return nil
	}
	if d.Delta.Text != nil {
		if c := s.chatByIndex[i]; c != nil {
			return fmt.Errorf("provider: bedrock-converse: text delta for block %d, a toolUse block", i)
		}
		s.text.WriteString(string(*d.Delta.Text))
	}
	return nil // reasoningContent, citation and other deltas
}
