package repair

import (
	"fmt"
	"strings"
)

// Verdict kinds.
const (
	KindRepaired           = "repaired"
	KindNeedsClarification = "needs_clarification"
	KindFailed             = "failed"
)

// Call is one tool call of the model's answer, as normalized by the caller
// (internal/provider's Call has the same Name and Arguments).
type Call struct {
	Name      string
	Arguments string
}

// Verdict is what the model's answer to a repair request means.
type Verdict struct {
	Kind string `json:"kind"`
	// Tool and Arguments are the repaired call (KindRepaired). The name may
	// differ from the offered tool; the call re-enters the parse gate and
	// every gate, policy and approval included, judges it again.
	Tool      string `json:"tool,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	// Text is the model's text (KindNeedsClarification, and kept for the
	// record otherwise).
	Text string `json:"text,omitempty"`
	// Why explains a KindFailed verdict.
	Why string `json:"why,omitempty"`
}

// missingInfo are phrases by which a model says it lacks information; they
// are matched case-insensitively in an answer without a tool call.
func missingInfo() []string {
	return []string{
		"missing", "not provided", "wasn't provided", "was not provided", "unavailable", "not available",
		"unknown", "don't know", "do not know", "not specified", "unspecified", "need to know", "needs to know",
		"please provide", "please specify", "please confirm", "cannot determine", "can't determine",
		"not enough information", "insufficient information", "clarif", "which one", "required information",
	}
}

// Answer classifies the model's answer to a repair request from its
// normalized tool calls and text:
//   - exactly one tool call: KindRepaired with its name and raw arguments
//     (not judged here: the parse gate judges them, even when empty);
//   - more than one tool call: KindFailed, since one call was asked for and
//     picking one would be a guess;
//   - no call, and text saying information is missing: KindNeedsClarification
//     with the text, to be handed to the user or upstream agent, not repaired
//     again;
//   - anything else (other text, nothing): KindFailed with the reason.
func Answer(calls []Call, text string) Verdict {
	text = strings.TrimSpace(text)
	switch {
	case len(calls) == 1:
		return Verdict{Kind: KindRepaired, Tool: calls[0].Name, Arguments: calls[0].Arguments, Text: text}
	case len(calls) > 1:
		return Verdict{Kind: KindFailed, Text: text, Why: fmt.Sprintf("repair: the model returned %d tool calls; one corrected call was asked for", len(calls))}
	case text == "":
		return Verdict{Kind: KindFailed, Why: "repair: the model returned neither a tool call nor text"}
	case saysMissing(text):
		return Verdict{Kind: KindNeedsClarification, Text: text}
	}
	return Verdict{Kind: KindFailed, Text: text, Why: "repair: the model answered in text without a tool call and did not say what is missing"}
}

func saysMissing(text string) bool {
	low := strings.ReplaceAll(strings.ToLower(text), "’", "'")
	for _, p := range missingInfo() {
		if strings.Contains(low, p) {
			return true
		}
	}
	return false
}
