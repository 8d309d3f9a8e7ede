// Package result turns the terminal outcome of one tool call into the
// tool-result message handed back to the model, in the provider's own wire
// format (OpenAI Chat, OpenAI Responses, Anthropic, Gemini, Ollama), with the
// outcome phrased for a model: what failed and what to change.
//
// The package is pure: no I/O, no NATS, no Redis.
package result

import "encoding/json"

// Provider names, as sent in the Toolgate-Provider header.
const (
	ProviderOpenAIChat      = "openai-chat"
	ProviderOpenAIResponses = "openai-responses"
	ProviderAnthropic       = "anthropic"
	ProviderGemini          = "gemini"
	ProviderOllama          = "ollama"
)

// Statuses the gates give a call. The wording of Text depends on them; an
// unknown status still yields a clear failure text.
const (
	statusExecuted            = "executed"
	statusDryRun              = "dry_run"
	statusFailed              = "failed"
	statusBusinessInvalid     = "business_invalid"
	statusNeedsClarification  = "needs_clarification"
	statusPolicyRejected      = "policy_rejected"
	statusApprovalDenied      = "approval_denied"
	statusApprovalExpired     = "approval_expired"
	statusApprovalRequired    = "approval_required"
	statusExecutionFailed     = "execution_failed"
	statusOutcomeUnknown      = "outcome_unknown"
	statusBatchAborted        = "batch_aborted"
	statusTransportIncomplete = "transport_incomplete"
	statusTruncated           = "truncated"
	statusInvalidJSON         = "invalid_json"
	statusSchemaInvalid       = "schema_invalid"
	statusNoSuchTool          = "no_such_tool"
	statusIdempotencyConflict = "idempotency_conflict"
	statusOutputTooLarge      = "output_too_large"
)

// Outcome is what happened to one call, as the gates decided it.
//
// OK decides whether the call succeeded (and so whether a provider's error
// flag is set); Status picks the wording of the text.
type Outcome struct {
	// Provider is one of the Provider* names; an unknown or empty provider
	// gets the OpenAI Chat shape.
	Provider string
	// CallID is toolgate's id of the call; it stands in for ProviderCallID
	// where the provider requires an id and the call had none.
	CallID string
	// ProviderCallID is the provider's id of the call ("" when none: Gemini
	// and Ollama often have none).
	ProviderCallID string
	// Tool is the tool name as the model wrote it (for no_such_tool, the
	// name that does not exist).
	Tool string
	// Status is the terminal status: executed, dry_run, business_invalid,
	// needs_clarification, policy_rejected, approval_denied,
	// approval_expired, approval_required, execution_failed,
	// outcome_unknown, batch_aborted, transport_incomplete, truncated,
	// invalid_json, schema_invalid, no_such_tool, idempotency_conflict,
	// output_too_large.
	Status string
	// OK is true when the call ran successfully (or passed a dry run).
	OK bool
	// Result is the executor's result when OK (any JSON value; text that is
	// not JSON is passed on as a string). A cut form (see Cut) is named in
	// the text and the message, not repeated.
	Result json.RawMessage
	// Errors lists the problems: schema paths, business problems, reasons.
	Errors []string
	// ValidTools lists the tools the model may call, for no_such_tool.
	ValidTools []string
}

// callID returns the id the provider's tool result must carry: the
// provider's own id when the call had one, else toolgate's.
func (o Outcome) callID() string {
	if o.ProviderCallID != "" {
		return o.ProviderCallID
	}
	return o.CallID
}
