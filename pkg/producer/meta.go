package producer

import (
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Meta is what a producer says about one response, sent as its Toolgate-*
// headers on every message of it. Provider and ResponseID are required.
type Meta struct {
	Provider     string // Toolgate-Provider: openai-chat, openai-responses, anthropic, gemini, ollama, bedrock-converse, cohere, gemini-interactions
	ResponseID   string // Toolgate-Response-Id; see ValidResponseID
	Tenant       string // Toolgate-Tenant
	Principal    string // Toolgate-Principal
	Roles        string // Toolgate-Roles, comma separated
	Conversation string // Toolgate-Conversation
	Model        string // Toolgate-Model
	Tolerant     bool   // Toolgate-Tolerant: true: recover tool calls written as text
	DryRun       bool   // Toolgate-Dry-Run: true: run every gate, execute nothing
	Atomic       bool   // Toolgate-Atomic: true: the response's calls run all or none
	MaxTokens    int    // Toolgate-Max-Tokens: the request's output token cap; 0: not sent
	// Priority is Toolgate-Priority: wire.PriorityInteractive (its calls go
	// first within the tenant's share) or wire.PriorityBatch (a bulk run:
	// they keep a minimum share); "": the tenant's default.
	Priority string
	// Token is the identity token (a JWT of the deployment's issuer), sent
	// as Toolgate-Token. Where toolgate verifies identity, tenant,
	// principal and roles come only from it and the fields above are
	// ignored.
	Token string
	// TraceParent and TraceState are the W3C trace context toolgate's
	// spans continue (sent as the lowercase traceparent and tracestate
	// headers; see ValidTraceParent, ValidTraceState). A malformed one
	// makes the publish fail; nothing is sent. TraceFrom fills them from
	// the caller's span (OpenTelemetry's propagator).
	TraceParent string
	TraceState  string
}

// header is m as headers; an empty field is not sent.
func (m Meta) header() (nats.Header, error) {
	if m.Provider == "" {
		return nil, fmt.Errorf("producer: response %q: no provider", m.ResponseID)
	}
	if !ValidResponseID(m.ResponseID) {
		return nil, fmt.Errorf("producer: response id %q: use 1 to 128 letters, digits, '-' and '_' (it is a subject token)", m.ResponseID)
	}
	if m.Priority != "" && m.Priority != wire.PriorityInteractive && m.Priority != wire.PriorityBatch {
		return nil, fmt.Errorf("producer: response %q: priority %q: want %q, %q or none", m.ResponseID, m.Priority, wire.PriorityInteractive, wire.PriorityBatch)
	}
	h := nats.Header{}
	set := func(k, v string) {
		if v != "" {
			h.Set(k, v)
		}
	}
	flag := func(k string, on bool) {
		if on {
			h.Set(k, "true")
		}
	}
	set(wire.HeaderProvider, m.Provider)
	set(wire.HeaderResponseID, m.ResponseID)
	set(wire.HeaderTenant, m.Tenant)
	set(wire.HeaderPrincipal, m.Principal)
	set(wire.HeaderRoles, m.Roles)
	set(wire.HeaderToken, m.Token)
	set(wire.HeaderConversation, m.Conversation)
	set(wire.HeaderModel, m.Model)
	set(wire.HeaderPriority, m.Priority)
	flag(wire.HeaderTolerant, m.Tolerant)
	flag(wire.HeaderDryRun, m.DryRun)
	flag(wire.HeaderAtomic, m.Atomic)
	if m.MaxTokens > 0 {
		h.Set(wire.HeaderMaxTokens, strconv.Itoa(m.MaxTokens))
	}
	if err := m.traceHeader(h); err != nil {
		return nil, err
	}
	return h, nil
}

// ValidResponseID reports whether id can stand as one subject token and one
// key-value key: 1 to 128 letters, digits, '-' and '_' (toolgate's own rule;
// toolgate replaces another id by a hash, so results would come on a subject
// the producer does not know).
func ValidResponseID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
