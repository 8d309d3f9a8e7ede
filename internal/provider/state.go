package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// callBuf is one call under assembly.
type callBuf struct {
	key      int // provider ordering key (index, block index, output_index, arrival)
	seq      int // arrival order, breaks ties
	id, name string
	args     []byte // text arguments as accumulated, or canonical object JSON
	object   bool
	freeText bool
	kind     string // openai-responses item type of a call that is not a function_call
	open     bool   // still expecting more (block not stopped, willContinue)
	truncWhy string // set by the codec when it knows better
	// gemini partialArgs under assembly
	partial *partialArgs
	// anthropic: input object from content_block_start, used when no delta came
	startInput []byte
	gotDelta   bool
}

func (c *callBuf) argLen() int {
	if c.partial != nil {
		return c.partial.bytes
	}
	return len(c.args)
}

// state is what every codec accumulates into.
type state struct {
	id, model      string
	text           strings.Builder
	calls          []*callBuf
	finish         Reason
	providerFinish string
	err            *Error
	done           bool
	outputTokens   int
	maxTokens      int // reported by the provider
	maxTokensOpt   int // given by the caller
	refusal        bool
	stopMeansCalls bool
	// codec-private positions
	chatByIndex map[int]*callBuf
	byItem      map[string]*callBuf
	gemOpen     *callBuf
	// openai-responses: call ids answered inside the response (run by the provider)
	respAnswered map[string]bool
	// openai-responses: output slots of items the provider ran (xAI's
	// server-side custom_tool_call items), whose input events are no call
	respServer map[int]bool
	// bedrock-converse: messageStop and metadata seen; the stream ends
	// when both have, in either order (bedrock_stream.go)
	bedrockStop, bedrockMeta bool
	// gemini-interactions: the type of the block started at each index
	interKinds map[int]string
}

func (s *state) newCall(key int) *callBuf {
	c := &callBuf{key: key, seq: len(s.calls)}
	s.calls = append(s.calls, c)
	return c
}

func (s *state) ordered() []*callBuf {
	out := make([]*callBuf, len(s.calls))
	copy(out, s.calls)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].key != out[j].key {
			return out[i].key < out[j].key
		}
		return out[i].seq < out[j].seq
	})
	return out
}

func (s *state) setError(e *Error) {
	s.err = e
	s.done = true
}

// build normalizes the state into a Response.
func (s *state) build() Response {
	r := Response{
		ID: s.id, Model: s.model, Text: s.text.String(),
		ProviderFinish: s.providerFinish, Error: s.err, Complete: s.done,
		OutputTokens: s.outputTokens, MaxTokens: s.maxTokens,
	}
	if s.maxTokensOpt > 0 {
		r.MaxTokens = s.maxTokensOpt
	}
	calls := s.ordered()
	r.Calls = make([]Call, 0, len(calls))
	for i, c := range calls {
		r.Calls = append(r.Calls, c.call(i))
	}
	r.Finish = s.finish
	switch {
	case s.err != nil:
		r.Finish = ReasonError
	case r.Finish == "":
		r.Finish = ReasonUnknown
	case r.Finish == ReasonStop && s.refusal:
		r.Finish = ReasonRefusal
	case r.Finish == ReasonStop && len(calls) > 0 && s.stopMeansCalls:
		r.Finish = ReasonToolCalls
	}
	for i := range r.Calls {
		markTruncated(&r.Calls[i], r, calls[i])
	}
	if r.Finish == ReasonContentFilter && len(r.Calls) > 0 {
		// Whatever the provider: output its content filter stopped is not
		// a proposal anyone vetted; its calls never reach a gate.
		names := make([]string, len(r.Calls))
		for i, c := range r.Calls {
			names[i] = c.Name
		}
		r.Error = withheldError("content_filter", "finish reason "+r.ProviderFinish+": the provider's content filter stopped the output", names)
		r.Calls, r.Finish = nil, ReasonError
	}
	return r
}

// withheldError is the provider error of a response whose calls (names)
// were withheld because a content filter or guardrail stopped its output:
// why, and which calls never run.
func withheldError(code, why string, names []string) *Error {
	msg := why
	if len(names) > 0 {
		msg = fmt.Sprintf("%s, so its %d tool call(s) (%s) are withheld and never run", why, len(names), strings.Join(names, ", "))
	}
	return &Error{Type: code, Code: code, Message: msg, Withheld: true}
}

func (c *callBuf) call(i int) Call {
	out := Call{Index: i, ID: c.id, Name: c.name, ArgumentsWereObject: c.object, FreeText: c.freeText, Kind: c.kind}
	switch {
	case c.partial != nil:
		out.Arguments = string(c.partial.canonical())
		out.ArgumentsWereObject = true
	case !c.gotDelta && c.startInput != nil:
		out.Arguments = string(c.startInput)
		out.ArgumentsWereObject = true
	case c.freeText:
		out.Arguments, out.ArgumentsWereObject = freeTextArgs(c.args), true
	default:
		out.Arguments = string(c.args)
	}
	return out
}

// markTruncated applies the truncation rules in order of certainty.
func markTruncated(c *Call, r Response, b *callBuf) {
	why := b.truncWhy
	switch {
	case why != "":
	case r.Finish == ReasonLength:
		why = "provider finish reason " + r.ProviderFinish + ": output token cap reached"
	case r.Complete && b.open:
		why = "call still open at the terminal event"
	case !c.FreeText && !c.ArgumentsWereObject && unclosedJSON(c.Arguments):
		why = "arguments end before their JSON closes"
	case r.MaxTokens > 0 && r.OutputTokens >= r.MaxTokens:
		why = "output tokens reached the requested max tokens"
	}
	if why != "" {
		c.Truncated, c.TruncatedWhy = true, why
	}
}

// unclosedJSON reports whether s is a JSON prefix that ends too early. Empty
// text is not: a provider that sends no arguments sends "".
func unclosedJSON(s string) bool {
	if strings.TrimSpace(s) == "" || json.Valid([]byte(s)) {
		return false
	}
	var v any
	err := json.NewDecoder(strings.NewReader(s)).Decode(&v)
	return errors.Is(err, io.ErrUnexpectedEOF)
}

func trimSpace(b []byte) []byte { return bytes.TrimSpace(b) }
