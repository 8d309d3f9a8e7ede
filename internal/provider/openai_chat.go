package provider

import (
	"bytes"
	"encoding/json"
	"encoding/json/jsontext"
	"errors"
	"fmt"
)

// OpenAIChat is the provider name of OpenAI Chat Completions.
const OpenAIChat = "openai-chat"

// OpenAI Chat Completions and the OpenAI-compatible servers (Groq, DeepSeek,
// Mistral, xAI, vLLM, llama.cpp, Ollama /v1, Anthropic's compat endpoint).
// Only choice 0 is read: a tool-calling request asks for one choice.

type chatFunction struct {
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments"` // a string; some servers send an object
}

type chatToolCall struct {
	Index    *int         `json:"index"`
	ID       string       `json:"id"`
	Function chatFunction `json:"function"`
}

type chatMessage struct {
	Content   jsontext.Value `json:"content"`
	Refusal   *string        `json:"refusal"`
	ToolCalls []chatToolCall `json:"tool_calls"`
}

type chatChoice struct {
	Index        int          `json:"index"`
	Message      chatMessage  `json:"message"`
	Delta        *chatMessage `json:"delta"`
	FinishReason *string      `json:"finish_reason"`
}

type chatBody struct {
	ID      string         `json:"id"`
	Model   string         `json:"model"`
	Choices []chatChoice   `json:"choices"`
	Usage   *chatUsage     `json:"usage"`
	Error   jsontext.Value `json:"error"`
}

type chatUsage struct {
	CompletionTokens int `json:"completion_tokens"`
}

var errChatShape = errors.New("provider: openai-chat: not a chat completion: expected an object with choices, usage or error")

// doneSentinel is the event that ends an OpenAI Chat stream.
const doneSentinel = "[DONE]"

func decodeChat(b []byte) (chatBody, error) {
	var c chatBody
	err := unmarshal(OpenAIChat, b, &c)
	return c, err
}

func (c *chatBody) common(s *state) bool {
	if c.ID != "" && s.id == "" {
		s.id = c.ID
	}
	if c.Model != "" && s.model == "" {
		s.model = c.Model
	}
	if c.Usage != nil && c.Usage.CompletionTokens > 0 {
		s.outputTokens = c.Usage.CompletionTokens
	}
	if e := decodeError(c.Error); e != nil {
		s.setError(e)
		return true
	}
	return false
}

func chatWhole(body []byte, s *state) error {
	c, err := decodeChat(body)
	if err != nil {
		return err
	}
	if c.common(s) {
		return nil
	}
	if c.Choices == nil {
		return errChatShape
	}
	ch := firstChoice(c.Choices)
	if ch == nil {
		return nil
	}
	if ch.Delta != nil {
		return errors.New("provider: openai-chat: body is a stream chunk (choices[].delta); send stream events one by one to an Accumulator")
	}
	m := ch.Message
	for _, tc := range m.ToolCalls {
		if err := argsKind(tc.Function.Arguments); err != nil {
			return err
		}
	}
	s.text.WriteString(contentText(m.Content))
	if m.Refusal != nil && *m.Refusal != "" {
		s.refusal = true
	}
	for i, tc := range m.ToolCalls {
		cb := s.newCall(i)
		cb.id, cb.name = tc.ID, tc.Function.Name
		if err := cb.addChatArgs(tc.Function.Arguments); err != nil {
			return err
		}
	}
	if ch.FinishReason != nil {
		s.finish, s.providerFinish = chatReason(*ch.FinishReason), *ch.FinishReason
	}
	return nil
}

func chatEvent(ev []byte, s *state) error {
	if string(ev) == doneSentinel {
		s.done = true
		return nil
	}
	c, err := decodeChat(ev)
	if err != nil {
		return err
	}
	if c.Choices == nil && c.Usage == nil && len(c.Error) == 0 {
		return errChatShape
	}
	ch := firstChoice(c.Choices)
	if s.done && ch != nil && ch.Delta != nil && (len(ch.Delta.ToolCalls) > 0 || contentText(ch.Delta.Content) != "") {
		return ErrAfterTerminal
	}
	errored := c.common(s)
	if s.maxTokensOpt > 0 && c.Usage != nil && len(c.Choices) == 0 && (s.finish != "" || s.providerFinish != "") {
		// The usage-only chunk (stream_options.include_usage) comes last,
		// after the finish: with a cap to compare it against, it ends the
		// stream.
		s.done = true
	}
	if errored || ch == nil || ch.Delta == nil && ch.FinishReason == nil {
		return nil
	}
	if d := ch.Delta; d != nil {
		for _, tc := range d.ToolCalls { // reject before changing anything
			if err := argsKind(tc.Function.Arguments); err != nil {
				return err
			}
		}
		s.text.WriteString(contentText(d.Content))
		if d.Refusal != nil && *d.Refusal != "" {
			s.refusal = true
		}
		for _, tc := range d.ToolCalls {
			if err := s.chatDelta(tc); err != nil {
				return err
			}
		}
	}
	if ch.FinishReason != nil && *ch.FinishReason != "" {
		s.finish, s.providerFinish = chatReason(*ch.FinishReason), *ch.FinishReason
		// A usage-only chunk and [DONE] may still follow. With a cap to
		// compare (Toolgate-Max-Tokens) and no usage yet, the finish is not
		// the end: output that reached the cap is truncation however the
		// stream finished, so the usage chunk (or [DONE]) ends it.
		s.done = s.maxTokensOpt == 0 || s.outputTokens > 0
	}
	return nil
}

// chatDelta routes one tool_calls delta to its call: by index when present
// (a new non-empty id with a name at a used index starts a new call, as some
// servers reuse index 0); without index (Mistral) a new id starts a call and
// anything else continues the last one.
func (s *state) chatDelta(tc chatToolCall) error {
	var c *callBuf
	if tc.Index != nil {
		if s.chatByIndex == nil {
			s.chatByIndex = map[int]*callBuf{}
		}
		c = s.chatByIndex[*tc.Index]
		if c != nil && tc.ID != "" && c.id != "" && tc.ID != c.id && tc.Function.Name != "" {
			c = nil
		}
		if c == nil {
			c = s.newCall(*tc.Index)
			s.chatByIndex[*tc.Index] = c
		}
	} else {
		if n := len(s.calls); n > 0 && (tc.ID == "" || tc.ID == s.calls[n-1].id) {
			c = s.calls[n-1]
		} else {
			c = s.newCall(len(s.calls))
		}
	}
	if c.id == "" {
		c.id = tc.ID
	}
	if c.name == "" {
		c.name = tc.Function.Name
	}
	return c.addChatArgs(tc.Function.Arguments)
}

// argsKind accepts arguments given as a JSON string, an object, null or
// nothing; anything else is not a tool call's arguments.
func argsKind(raw jsontext.Value) error {
	if len(raw) == 0 || raw[0] == '"' || raw[0] == '{' || string(raw) == "null" {
		return nil
	}
	return fmt.Errorf("provider: tool call arguments must be a JSON string or object, got %.20s", raw)
}

// addChatArgs appends an arguments fragment: a JSON string is appended as
// text; an object (non-standard servers) is kept as canonical JSON.
func (c *callBuf) addChatArgs(raw jsontext.Value) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		args, err := appendJSONString(c.args, raw)
		if err != nil {
			return err
		}
		c.args = args
		return nil
	}
	if err := argsKind(raw); err != nil {
		return err
	}
	obj, err := objectArgs(raw)
	if err != nil {
		return fmt.Errorf("provider: arguments object: %w", err)
	}
	c.args, c.object = obj, true
	return nil
}

func firstChoice(cs []chatChoice) *chatChoice {
	for i := range cs {
		if cs[i].Index == 0 {
			return &cs[i]
		}
	}
	return nil
}

// contentText reads message content given as a string or as an array of
// parts with text, byte for byte (wireString).
func contentText(raw jsontext.Value) string {
	if len(raw) == 0 || raw[0] == 'n' {
		return ""
	}
	if raw[0] == '"' {
		s, _ := appendJSONString(nil, raw)
		return string(s)
	}
	var parts []struct {
		Type string     `json:"type"`
		Text wireString `json:"text"`
	}
	if unmarshal(OpenAIChat, raw, &parts) != nil {
		return ""
	}
	var b bytes.Buffer
	for _, p := range parts {
		if p.Type == "" || p.Type == "text" || p.Type == "output_text" {
			b.WriteString(string(p.Text))
		}
	}
	return b.String()
}

// chatToolResult: {"role":"tool","tool_call_id":id,"content":Text}. It is
// also the shape an unknown provider gets.
func chatToolResult(a Answer) (json.RawMessage, error) {
	id, err := a.requireID()
	if err != nil {
		return nil, err
	}
	return marshalResult(struct {
		Role       string `json:"role"`
		ToolCallID string `json:"tool_call_id"`
		Content    string `json:"content"`
	}{"tool", id, a.Text})
}

// EndsCappedStream reports whether ev, one stream event of provider, is the
// event that ends a stream whose request set an output cap: for openai-chat
// the usage-only chunk (stream_options.include_usage: no choices, usage
// set), which follows the finish — the stream cannot end at the finish,
// since only the usage says whether the output reached the cap. An
// Accumulator given the cap (WithMaxTokens) is Done there; this tells it from
// the one event alone, as the accumulate gate's per-event probe must.
func EndsCappedStream(provider string, ev []byte) bool {
	if provider != OpenAIChat || len(ev) == 0 || ev[0] != '{' {
		return false
	}
	c, err := decodeChat(ev)
	return err == nil && c.Usage != nil && len(c.Choices) == 0 && len(c.Error) == 0
}
