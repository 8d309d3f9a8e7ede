// Package parse is the strict parser for tool-call arguments. It accepts
// exactly one JSON object within size and depth limits, tells truncated JSON
// (the text ends before the document does) apart from malformed JSON, never
// completes a truncated document, and reports where and why parsing failed.
// Repair applies opt-in cosmetic fixes and reports every change it made.
package parse

// Default limits, chosen so that one hostile argument document cannot take a
// worker down while real arguments (a few KiB) always fit.
const (
	DefaultMaxBytes = 1 << 20
	DefaultMaxDepth = 64
	DefaultMaxCalls = 128
)

// Limits bounds the work done on one response. A zero or negative field
// means its default.
type Limits struct {
	// MaxBytes is the largest argument document accepted, in bytes.
	MaxBytes int
	// MaxDepth is the deepest nesting of objects and arrays accepted; the
	// arguments object itself is depth 1.
	MaxDepth int
	// MaxCalls is the largest number of tool calls accepted in one
	// response; see CheckCalls.
	MaxCalls int
	// EmptyIsObject makes empty or white-space-only arguments parse as {}.
	// Anthropic streams a no-argument tool_use with partial_json "" and LM
	// Studio sends no argument deltas at all, so a caller that knows the
	// response finished normally may set it. Off by default because a stream
	// cut before its first argument byte is empty too.
	EmptyIsObject bool
}

// DefaultLimits returns 1 MiB, depth 64 and 128 calls per response.
func DefaultLimits() Limits {
	return Limits{MaxBytes: DefaultMaxBytes, MaxDepth: DefaultMaxDepth, MaxCalls: DefaultMaxCalls}
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxCalls <= 0 {
		l.MaxCalls = DefaultMaxCalls
	}
	return l
}

// CheckCalls returns a CodeTooManyCalls error when n calls exceed
// l.MaxCalls, and nil otherwise.
func (l Limits) CheckCalls(n int) *Error {
	l = l.withDefaults()
	if n <= l.MaxCalls {
		return nil
	}
	return &Error{
		Code:    CodeTooManyCalls,
		Message: "the response proposes " + itoa(n) + " tool calls, more than the limit of " + itoa(l.MaxCalls) + "; raise MaxCalls or ask the model for fewer calls",
	}
}
