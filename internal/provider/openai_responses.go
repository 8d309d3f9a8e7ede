package provider

import (
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"strings"
)

// OpenAIResponses is the provider name of the OpenAI Responses API.
const OpenAIResponses = "openai-responses"

// OpenAI Responses API (also Azure, LM Studio's Open Responses, DeepSeek's
// compatible endpoint). Client calls are function_call items (JSON text
// arguments), custom_tool_call items (free-text input) and the other items
// the client runs (openai_responses_items.go). Server-run items
// (web_search_call, mcp_call, a server tool_search, xAI's search tools
// written as custom_tool_call items with xs_call_ ids, ...) are not client
// calls, nor is a call answered inside the same response.

type respContent struct {
	Type    string     `json:"type"`
	Text    wireString `json:"text"`
	Refusal string     `json:"refusal"`
}

type respItem struct {
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	CallID    string         `json:"call_id"`
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
	Input     *wireString    `json:"input"` // a free-text tool's arguments
	Content   []respContent  `json:"content"`
	// the items the client runs besides function_call
	Status            string `json:"status"`
	Execution         string `json:"execution"`
	ApprovalRequestID string `json:"approval_request_id"`
	Environment       *struct {
		Type string `json:"type"`
	} `json:"environment"`
	raw jsontext.Value // the whole item, kept for the kinds built from it
}

type respBody struct {
	ID                string `json:"id"`
	Model             string `json:"model"`
	Status            string `json:"status"`
	MaxOutputTokens   int    `json:"max_output_tokens"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Output []respItem `json:"output"`
	Usage  *struct {
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	Error jsontext.Value `json:"error"`
}

type respEventBody struct {
	Type        string         `json:"type"`
	Response    *respBody      `json:"response"`
	Item        *respItem      `json:"item"`
	ItemID      string         `json:"item_id"`
	OutputIndex int            `json:"output_index"`
	Delta       jsontext.Value `json:"delta"`
	Arguments   jsontext.Value `json:"arguments"`
	Input       *wireString    `json:"input"`
	// error event fields
	Code    jsontext.Value `json:"code"`
	Message string         `json:"message"`
	Error   jsontext.Value `json:"error"`
}

var errRespShape = errors.New("provider: openai-responses: not a Responses API object: expected output, status or error")

func respWhole(body []byte, s *state) error {
	var r respBody
	if err := unmarshal(OpenAIResponses, body, &r); err != nil {
		return err
	}
	if r.Output == nil && r.Status == "" && len(r.Error) == 0 {
		return errRespShape
	}
	return s.respFinal(&r, true)
}

// respFinal applies a whole response object: from a body, or from the
// terminal event, where calls the stream already carried are kept as they
// arrived.
func (s *state) respFinal(r *respBody, whole bool) error {
	s.respHeader(r)
	if r.Usage != nil {
		s.outputTokens = r.Usage.OutputTokens
	}
	for i := range r.Output {
		s.respAnswer(answers(&r.Output[i]))
		s.respServerRun(i, &r.Output[i])
	}
	for i := range r.Output {
		it := &r.Output[i]
		if it.Type == "message" && whole {
			s.respMessage(it)
			continue
		}
		kind := itemKind(it)
		if kind == "" || s.respAnswered[itemCallID(it)] {
			continue
		}
		// A streamed call is kept as it arrived, unless its item never said
		// it was done: then the final item is the call.
		if c := s.byItem[it.ID]; !whole && c != nil && !(statusful(kind) && c.open) {
			continue
		}
		if err := s.respItem(i, it).setItemArgs(it); err != nil {
			return err
		}
	}
	switch r.Status {
	case "completed":
		s.finish, s.providerFinish = ReasonStop, r.Status
	case "incomplete":
		s.providerFinish = "incomplete"
		s.finish = ReasonUnknown
		if r.IncompleteDetails != nil {
			s.providerFinish += ":" + r.IncompleteDetails.Reason
			switch r.IncompleteDetails.Reason {
			case "max_output_tokens":
				s.finish = ReasonLength
			case "content_filter":
				s.finish = ReasonContentFilter
			}
		}
	case "failed":
		s.finish, s.providerFinish = ReasonError, r.Status
	default:
		s.finish, s.providerFinish = ReasonUnknown, r.Status
	}
	if e := decodeError(r.Error); e != nil {
		s.setError(e)
	}
	return nil
}

func (s *state) respHeader(r *respBody) {
	if r.ID != "" {
		s.id = r.ID
	}
	if r.Model != "" {
		s.model = r.Model
	}
	if r.MaxOutputTokens > 0 {
		s.maxTokens = r.MaxOutputTokens
	}
}

func (s *state) respMessage(it *respItem) {
	for _, c := range it.Content {
		switch c.Type {
		case "output_text":
			s.text.WriteString(string(c.Text))
		case "refusal":
			s.refusal = true
		}
	}
}

// respItem finds or creates the call for an output item.
func (s *state) respItem(outputIndex int, it *respItem) *callBuf {
	if s.byItem == nil {
		s.byItem = map[string]*callBuf{}
	}
	// A call keeps the kind it started as: an item of another type under
	// the same id or slot is another call, never a change of tool.
	kind := itemKind(it)
	if kind == "function_call" {
		kind = ""
	}
	c := s.byItem[it.ID]
	if c != nil && c.kind != kind {
		c = nil
	}
	if c == nil && it.ID == "" { // servers that omit item ids: same call id or output slot
		for _, o := range s.calls {
			if o.kind == kind && (it.CallID != "" && o.id == it.CallID || it.CallID == "" && o.key == outputIndex) {
				c = o
				break
			}
		}
	}
	if c == nil {
		c = s.newCall(outputIndex)
		c.kind, c.freeText = kind, kind == KindCustomTool
		if it.ID != "" && s.byItem[it.ID] == nil {
			s.byItem[it.ID] = c
		}
	}
	if c.id == "" {
		c.id = itemCallID(it)
	}
	if c.name == "" {
		c.name = it.Name
		if kind != "" && kind != KindCustomTool {
			c.name = kind
		}
	}
	return c
}

// setItemArgs replaces the arguments with the item's final ones, when it
// carries any.
func (c *callBuf) setItemArgs(it *respItem) error {
	if statusful(itemKind(it)) {
		return c.setKindArgs(it)
	}
	if it.Input != nil {
		c.args = append(c.args[:0], *it.Input...)
		return nil
	}
	if len(it.Arguments) == 0 || string(it.Arguments) == "null" {
		return nil
	}
	c.args, c.object = c.args[:0], false
	return c.addChatArgs(it.Arguments)
}

func respEvent(ev []byte, s *state) error {
	var e respEventBody
	if err := unmarshal(OpenAIResponses, ev, &e); err != nil {
		return err
	}
	if e.Type != "error" && !strings.HasPrefix(e.Type, "response.") {
		// Unknown response.* events are new features and are ignored.
		return fmt.Errorf("provider: openai-responses: event type %q is not a Responses API event", e.Type)
	}
	if s.done {
		return ErrAfterTerminal
	}
	switch e.Type {
	case "response.created", "response.in_progress", "response.queued":
		if e.Response != nil {
			s.respHeader(e.Response)
		}
	case "response.output_item.added", "response.output_item.done":
		if e.Item == nil {
			return nil
		}
		s.respAnswer(answers(e.Item))
		s.respServerRun(e.OutputIndex, e.Item)
		if itemKind(e.Item) == "" || s.respAnswered[itemCallID(e.Item)] {
			return nil
		}
		return s.respItem(e.OutputIndex, e.Item).setItemArgs(e.Item)
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		if s.respServer[e.OutputIndex] || strings.HasPrefix(e.ItemID, xaiServerCallPrefix) {
			return nil // the input of a tool the provider ran
		}
		c := s.respCallFor(&e)
		args, err := appendJSONString(c.args, e.Delta)
		if err != nil {
			return fmt.Errorf("provider: openai-responses: %s: delta: %w", e.Type, err)
		}
		c.args = args
	case "response.function_call_arguments.done":
		c := s.respCallFor(&e)
		c.args, c.object = c.args[:0], false
		return c.addChatArgs(e.Arguments)
	case "response.custom_tool_call_input.done":
		if s.respServer[e.OutputIndex] || strings.HasPrefix(e.ItemID, xaiServerCallPrefix) {
			return nil
		}
		c := s.respCallFor(&e)
		c.freeText = true
		if e.Input != nil {
			c.args = append(c.args[:0], *e.Input...)
		}
	case "response.output_text.delta":
		frag, err := appendJSONString(nil, e.Delta)
		if err != nil {
			return fmt.Errorf("provider: openai-responses: output_text delta: %w", err)
		}
		s.text.Write(frag)
	case "response.refusal.delta", "response.refusal.done":
		s.refusal = true
	case "response.completed", "response.incomplete", "response.failed":
		if e.Response == nil {
			return fmt.Errorf("provider: openai-responses: %s without response object", e.Type)
		}
		s.done = true
		return s.respFinal(e.Response, false)
	case "error":
		er := decodeError(e.Error)
		if er == nil {
			er = &Error{Code: scalarString(e.Code), Message: e.Message}
		}
		s.setError(er)
	}
	return nil
}

// respCallFor finds the call an argument event belongs to, by item id, then
// by output index; an event for an unseen item starts a call.
func (s *state) respCallFor(e *respEventBody) *callBuf {
	// Argument text never lands in a call whose arguments are an item's object.
	if c := s.byItem[e.ItemID]; c != nil && !statusful(c.kind) {
		return c
	}
	for _, c := range s.calls {
		if c.key == e.OutputIndex && !statusful(c.kind) {
			return c
		}
	}
	typ := "function_call"
	if strings.HasPrefix(e.Type, "response.custom_tool_call_input.") {
		typ = KindCustomTool
	}
	return s.respItem(e.OutputIndex, &respItem{ID: e.ItemID, Type: typ})
}
