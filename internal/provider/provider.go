// Package provider normalizes LLM provider responses — whole bodies or streams
// event by event — into one shape: the proposed tool calls with their raw
// arguments, the assistant's visible text, a normalized completion reason
// beside the provider's own word, and any provider error.
//
// It is pure: no I/O, no NATS. It never completes or repairs arguments; it only
// reports what arrived and whether it looks cut off (Call.Truncated). A call
// from a stream is a draft until Done reports the provider's terminal event.
package provider

import (
	"errors"
	"fmt"
)

// ErrAfterTerminal is returned by Add for an event that starts or continues a
// response after the provider's terminal event. The event is ignored. A
// recording holding several responses back to back (agent runs) continues in
// a new Accumulator.
var ErrAfterTerminal = errors.New("provider: event after the terminal event (a new response needs a new accumulator)")

// Call is one proposed tool call, in output order.
type Call struct {
	// Index is the position among this response's calls, 0..n-1.
	Index int `json:"index"`
	// ID is the provider's own call id; "" when the provider sent none.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the raw argument text exactly as accumulated. When the
	// provider sent an object (Anthropic whole input, Gemini args, Ollama
	// arguments) it is that object's canonical JSON (package canon).
	// For a free-text custom tool (OpenAI Responses custom_tool_call) it is
	// {"input": the text}; for the other Responses items the client runs,
	// the item's action, operation or request object (Kind).
	Arguments           string `json:"arguments"`
	ArgumentsWereObject bool   `json:"arguments_were_object"`
	// FreeText marks a custom tool whose input is not JSON: Arguments is
	// {"input": the text}, ArgumentsWereObject true.
	FreeText bool `json:"free_text,omitempty"`
	// Kind is the OpenAI Responses item type of a call that is not a
	// function_call (custom_tool_call, local_shell_call, shell_call,
	// apply_patch_call, computer_call, mcp_approval_request, a client
	// tool_search_call, or an unknown *_call type); its tool result is
	// answered in that item's output format. "" for every other call.
	Kind string `json:"kind,omitempty"`
	// Truncated is true when the provider said length/max_tokens, the
	// arguments end before their JSON closes, the output token count reached
	// the cap, or the call was still open at the terminal event — even when
	// the provider claimed tool_calls. TruncatedWhy says which.
	Truncated    bool   `json:"truncated"`
	TruncatedWhy string `json:"truncated_why,omitempty"`
}

// Error is a provider error carried instead of (or after) output: an error
// body, or an SSE error event. FailedGeneration is the model's rejected raw
// text when the provider returns it (Groq tool_use_failed).
type Error struct {
	Type             string `json:"type,omitempty"`
	Code             string `json:"code,omitempty"`
	Message          string `json:"message,omitempty"`
	FailedGeneration string `json:"failed_generation,omitempty"`
	// Withheld: a content filter or guardrail stopped the output, and the
	// response's calls were dropped so that none reaches a gate; its text
	// is not a source of calls either.
	Withheld bool `json:"withheld,omitempty"`
}

// Response is one normalized provider response.
type Response struct {
	Provider string `json:"provider"`
	ID       string `json:"id,omitempty"`
	Model    string `json:"model,omitempty"`
	// Text is the assistant's own visible text (not reasoning or thinking),
	// kept for recovering calls written as text.
	Text  string `json:"text"`
	Calls []Call `json:"calls"`
	// Finish is the normalized reason; ProviderFinish the provider's own word
	// ("end_turn", "MAX_TOKENS", "1", "incomplete:max_output_tokens", ...).
	Finish         Reason `json:"finish"`
	ProviderFinish string `json:"provider_finish,omitempty"`
	Error          *Error `json:"error,omitempty"`
	// Complete is true once the provider's terminal event was seen; always
	// true for a whole body. Only calls of a Complete response with no Error
	// may go further than progress display.
	Complete     bool `json:"complete"`
	OutputTokens int  `json:"output_tokens,omitempty"`
	MaxTokens    int  `json:"max_tokens,omitempty"`
}

// Progress is what a UI may show about a call while a stream is open.
type Progress struct {
	Index         int
	Name          string
	ArgumentBytes int
}

// Option adjusts normalization.
type Option func(*options)

type options struct{ maxTokens int }

// WithMaxTokens tells the normalizer the output token cap of the request, so
// that a response whose output token count reached it marks its calls
// truncated. A cap the provider reports itself (OpenAI Responses
// max_output_tokens) is used when this option is absent.
func WithMaxTokens(n int) Option { return func(o *options) { o.maxTokens = n } }

// ParseResponse normalizes one complete (non-streamed) response body. A
// provider error body yields a Response with Error set and Finish error, and
// a nil error. The error is non-nil only when body is not that provider's
// response shape.
func ParseResponse(provider string, body []byte, opts ...Option) (Response, error) {
	a, err := NewAccumulator(provider, opts...)
	if err != nil {
		return Response{}, err
	}
	if err := a.codec.whole(body, &a.st); err != nil {
		return Response{Provider: provider}, err
	}
	a.st.done = true
	return a.Response(), nil
}

// Accumulator assembles one streamed response event by event. It is not safe
// for concurrent use.
type Accumulator struct {
	provider string
	codec    codec
	st       state
}

// NewAccumulator returns an empty accumulator for provider.
func NewAccumulator(provider string, opts ...Option) (*Accumulator, error) {
	c, ok := lookup(provider)
	if !ok {
		return nil, &UnknownError{Name: provider}
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	a := &Accumulator{provider: provider, codec: c}
	a.st.maxTokensOpt = o.maxTokens
	a.st.stopMeansCalls = c.stopMeansCalls
	return a, nil
}

// Add feeds one event: one SSE data payload (without "data: ") or one NDJSON
// line. "[DONE]" is accepted. Add never panics; on garbage it returns an error,
// keeps what it had and stays usable.
func (a *Accumulator) Add(event []byte) (err error) {
	defer func() {
		if r := recover(); r != nil { // a bug here must not take a gate down
			err = fmt.Errorf("provider: %s: internal error on event: %v", a.provider, r)
		}
	}()
	return a.codec.event(trimSpace(event), &a.st)
}

// Done reports whether the provider's terminal event arrived: "[DONE]" or a
// chunk with finish_reason (openai-chat), response.completed/incomplete/failed
// (openai-responses), message_stop (anthropic), a chunk with finishReason or
// promptFeedback.blockReason (gemini), "done": true (ollama), the second of
// messageStop and metadata (bedrock-converse, either order), or a provider
// error event (any).
func (a *Accumulator) Done() bool { return a.st.done }

// MayEnd reports whether an event that can end the stream arrived: the
// terminal event, or one of the two events that end a Bedrock stream in
// either order (messageStop, metadata). A stream of one such event is
// worth settling (Done, or AwaitsOptional after a grace).
func (a *Accumulator) MayEnd() bool { return a.st.done || a.st.bedrockStop || a.st.bedrockMeta }

// AwaitsOptional reports whether the stream has everything its response
// needs and waits only for an optional last event: a Bedrock stream at
// messageStop without metadata (the usage). Its caller settles it after a
// short grace with Settle, so that a complete call never hangs on an event
// some producers never send.
func (a *Accumulator) AwaitsOptional() bool {
	return !a.st.done && a.st.bedrockStop && !a.st.bedrockMeta
}

// Settle completes a stream that AwaitsOptional, without its optional
// event; the response then has no output token count. It does nothing to
// any other stream.
func (a *Accumulator) Settle() {
	if a.AwaitsOptional() {
		a.st.done = true
	}
}

// Progress lists the calls seen so far with their argument bytes. It is for
// display only; nothing may execute from it.
func (a *Accumulator) Progress() []Progress {
	calls := a.st.ordered()
	out := make([]Progress, len(calls))
	for i, c := range calls {
		out[i] = Progress{Index: i, Name: c.name, ArgumentBytes: c.argLen()}
	}
	return out
}

// Response returns what arrived so far, normalized. Complete equals Done().
func (a *Accumulator) Response() Response {
	r := a.st.build()
	r.Provider = a.provider
	return r
}
