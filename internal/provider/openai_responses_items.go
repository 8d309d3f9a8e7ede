package provider

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"slices"
	"strings"
	"unicode/utf8"
)

// The OpenAI Responses output items the client runs, beside function_call.
// Each is a call whose tool name is its item type — local_shell_call,
// shell_call, apply_patch_call, computer_call, mcp_approval_request,
// tool_search_call — so an operator registers a tool under that name and the
// call goes through every gate like any other; a custom_tool_call keeps its
// own name. Call.Kind carries the item type, and ToolResult answers in the
// item's own output format. The names carry the "_call" suffix because
// function tools named shell or apply_patch are common (Codex has both): the
// built-in kind and a function must not share a name, nor an answer shape.
const (
	KindCustomTool  = "custom_tool_call"
	KindLocalShell  = "local_shell_call"
	KindShell       = "shell_call"
	KindApplyPatch  = "apply_patch_call"
	KindComputer    = "computer_call"
	KindMCPApproval = "mcp_approval_request"
	KindToolSearch  = "tool_search_call"
)

// UnmarshalJSONFrom implements json.UnmarshalerFrom: the item's fields, and
// the item itself when its kind builds its arguments from it.
func (it *respItem) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	type plain respItem
	if err := json.Unmarshal(v, (*plain)(it), wireOptions()); err != nil {
		return err
	}
	if statusful(itemKind(it)) {
		it.raw = append(jsontext.Value(nil), v...)
	}
	return nil
}

// itemKind is the call kind of an output item: "function_call", one of the
// Kind constants, or an item type toolgate does not know that ends in
// "_call" or "_request" (a future client tool: it is recorded as a call of
// that name, never dropped). "" when the item asks nothing of the client:
// messages, reasoning, outputs, and the items the provider runs itself.
func itemKind(it *respItem) string {
	switch it.Type {
	case KindCustomTool:
		if providerRunCustom(it) {
			return "" // xAI's built-in search, already run by xAI
		}
		return it.Type
	case "function_call", KindLocalShell, KindApplyPatch, KindComputer, KindMCPApproval:
		return it.Type
	case "web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call",
		"mcp_call", "x_search_call", "code_execution_call":
		return "" // run by the provider
	case KindToolSearch:
		if it.Execution == "client" {
			return it.Type
		}
		return ""
	case KindShell:
		if it.Environment != nil && strings.HasPrefix(it.Environment.Type, "container") {
			return "" // the hosted shell runs in the provider's container
		}
		return it.Type
	}
	if strings.HasSuffix(it.Type, "_call") || strings.HasSuffix(it.Type, "_request") {
		return it.Type
	}
	return ""
}

// xaiServerCallPrefix begins the ids of the custom_tool_call items of xAI's
// built-in search tools (x_keyword_search, x_semantic_search,
// x_user_search, x_thread_fetch, ...): xAI ran them before answering, and
// the answer text that follows already uses their results.
const xaiServerCallPrefix = "xs_call_"

// providerRunCustom reports a custom_tool_call item the provider ran
// itself: one of xAI's server-side tool calls, known by its id.
func providerRunCustom(it *respItem) bool {
	return strings.HasPrefix(it.CallID, xaiServerCallPrefix) || strings.HasPrefix(it.ID, xaiServerCallPrefix)
}

// respServerRun records an item the provider ran, so that its input
// events never start a client call, and drops a call its input events
// already started.
func (s *state) respServerRun(outputIndex int, it *respItem) {
	if it.Type != KindCustomTool || !providerRunCustom(it) {
		return
	}
	if s.respServer == nil {
		s.respServer = map[int]bool{}
	}
	s.respServer[outputIndex] = true
	if c := s.byItem[it.ID]; c != nil && it.ID != "" {
		delete(s.byItem, it.ID)
		s.calls = slices.DeleteFunc(s.calls, func(o *callBuf) bool { return o == c })
	}
}

// builtinKind reports the kinds whose tool name is the kind itself.
func builtinKind(k string) bool {
	switch k {
	case KindLocalShell, KindShell, KindApplyPatch, KindComputer, KindMCPApproval, KindToolSearch:
		return true
	}
	return false
}

// answers returns the call an item answers inside the same response (a
// *_output item, an mcp_call run after approval, an approval response): that
// call ran at the provider and is not the client's to run.
func answers(it *respItem) string {
	switch {
	case strings.HasSuffix(it.Type, "_output"):
		return it.CallID
	case it.Type == "mcp_call" || it.Type == "mcp_approval_response":
		return it.ApprovalRequestID
	}
	return ""
}

// itemCallID is the id the answer must carry: call_id, or the item's own id
// for items without one (mcp_approval_request: approval_request_id).
func itemCallID(it *respItem) string {
	if it.CallID != "" {
		return it.CallID
	}
	return it.ID
}

// statusful kinds carry their arguments whole in the item: an item still
// in_progress is open, one that says incomplete was cut.
func statusful(kind string) bool {
	return kind != "" && kind != "function_call" && kind != KindCustomTool
}

// setKindArgs sets a call's arguments from an item of a statusful kind: the
// action (local_shell_call, shell_call) or operation (apply_patch_call)
// object; computer_call's action or actions with its pending safety checks;
// mcp_approval_request's server_label, name and arguments (decoded when they
// are a JSON object); tool_search_call's arguments; and an unknown kind's
// whole item. An item without them leaves the arguments as they were.
func (c *callBuf) setKindArgs(it *respItem) error {
	c.open = it.Status == "in_progress"
	if it.Status == "incomplete" {
		c.truncWhy = "the " + it.Type + " item says status incomplete"
	}
	var m map[string]jsontext.Value
	if err := json.Unmarshal(it.raw, &m, wireOptions()); err != nil {
		return wireError(OpenAIResponses, err)
	}
	var raw jsontext.Value
	switch it.Type {
	case KindLocalShell, KindShell:
		raw = m["action"]
	case KindApplyPatch:
		raw = m["operation"]
	case KindToolSearch:
		raw = m["arguments"]
	case KindComputer:
		raw = members(m, "action", "actions", "pending_safety_checks")
	case KindMCPApproval:
		if a := m["arguments"]; a.Kind() == '"' {
			if s, err := appendJSONString(nil, a); err == nil && jsontext.Value(s).Kind() == '{' && jsontext.Value(s).IsValid(jsontext.AllowInvalidUTF8(true)) {
				m["arguments"] = s // the MCP tool's arguments as an object rules can read
			}
		}
		raw = members(m, "server_label", "name", "arguments")
	default:
		raw = it.raw
	}
	if len(raw) == 0 || raw.Kind() == 'n' {
		return nil
	}
	c.args, c.object = c.args[:0], false
	if raw.Kind() != '{' {
		return c.addChatArgs(raw)
	}
	obj, err := objectArgs(raw)
	if err != nil {
		return wireError(OpenAIResponses, err)
	}
	c.args, c.object = obj, true
	return nil
}

// members is the object of m's named members that are present and not null.
func members(m map[string]jsontext.Value, keys ...string) jsontext.Value {
	out := jsontext.Value("{")
	for _, k := range keys {
		v, ok := m[k]
		if !ok || v.Kind() == 'n' {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(append(out, '"'), k...), '"', ':'), v...)
	}
	return append(out, '}')
}

// freeTextArgs wraps a custom tool's free-text input as {"input": text}, so
// the tool's schema and rules read it like any other argument. Invalid UTF-8
// stays as raw bytes inside the string, for the parse gate to refuse with
// the offset: nothing is replaced.
func freeTextArgs(text []byte) string {
	out := append(make([]byte, 0, len(text)+12), `{"input":"`...)
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRune(text[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			out = append(out, text[i])
		case r == '"' || r == '\\':
			out = append(out, '\\', byte(r))
		case r == '\n':
			out = append(out, `\n`...)
		case r == '\r':
			out = append(out, `\r`...)
		case r == '\t':
			out = append(out, `\t`...)
		case r < 0x20:
			out = append(out, `\u00`...)
			out = append(out, "0123456789abcdef"[r>>4], "0123456789abcdef"[r&0xf])
		default:
			out = append(out, text[i:i+n]...)
		}
		i += n
	}
	return string(append(out, `"}`...))
}

// respAnswer drops the call an item answers inside the response, and keeps
// it from starting again.
func (s *state) respAnswer(id string) {
	if id == "" {
		return
	}
	if s.respAnswered == nil {
		s.respAnswered = map[string]bool{}
	}
	s.respAnswered[id] = true
	kept := s.calls[:0]
	for _, c := range s.calls {
		if c.id == id && c.kind != "" {
			for k, b := range s.byItem {
				if b == c {
					delete(s.byItem, k)
				}
			}
			continue
		}
		kept = append(kept, c)
	}
	s.calls = kept
}
