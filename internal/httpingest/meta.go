package httpingest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/tracehdr"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/wire"
)

// maxEnd bounds a Toolgate-End reason.
const maxEnd = 256

// metaOf reads the Toolgate-* headers of a POST into the Meta every message
// of the response carries, and the Toolgate-End reason. A missing provider
// is detected from body; a missing response id is made up. Every error
// names the header and what it takes. A valid traceparent/tracestate is
// carried on (tracehdr.FromHTTP); a malformed one is dropped.
func metaOf(h http.Header, c caller, body []byte) (producer.Meta, string, error) {
	m := producer.Meta{
		Provider: strings.TrimSpace(h.Get(wire.HeaderProvider)), ResponseID: strings.TrimSpace(h.Get(wire.HeaderResponseID)),
		Tenant: c.tenant, Principal: h.Get(wire.HeaderPrincipal), Roles: h.Get(wire.HeaderRoles), Token: c.token,
		Conversation: h.Get(wire.HeaderConversation), Model: h.Get(wire.HeaderModel),
	}
	// The caller's trace continues; what is malformed is dropped, not refused.
	m.TraceParent, m.TraceState = tracehdr.FromHTTP(h)
	if !producer.ValidTraceParent(m.TraceParent) {
		m.TraceParent, m.TraceState = "", ""
	} else if !producer.ValidTraceState(m.TraceState) {
		m.TraceState = ""
	}
	if c.principal != "" {
		m.Principal = c.principal // the credential's (who checked a header that differs)
	}
	if m.Provider == "" {
		p, err := provider.Detect(body)
		if err != nil {
			return m, "", fmt.Errorf("the %s header is not set, and %s; set the %s header to one of %s", wire.HeaderProvider, undetected(err, body), wire.HeaderProvider, strings.Join(provider.Names(), ", "))
		}
		m.Provider = p
	} else if !provider.Known(m.Provider) {
		return m, "", fmt.Errorf("the %s header %s: unknown provider; set it to one of %s", wire.HeaderProvider, clip(m.Provider), strings.Join(provider.Names(), ", "))
	}
	if m.ResponseID == "" {
		m.ResponseID = newResponseID()
	} else if !producer.ValidResponseID(m.ResponseID) {
		return m, "", fmt.Errorf("%s %s: use 1 to 128 letters, digits, '-' and '_'", wire.HeaderResponseID, clip(m.ResponseID))
	}
	for _, f := range []struct {
		name string
		to   *bool
	}{{wire.HeaderTolerant, &m.Tolerant}, {wire.HeaderDryRun, &m.DryRun}, {wire.HeaderAtomic, &m.Atomic}} {
		v, err := boolHeader(h, f.name)
		if err != nil {
			return m, "", err
		}
		*f.to = v
	}
	if v := strings.TrimSpace(h.Get(wire.HeaderMaxTokens)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return m, "", fmt.Errorf("%s %s: want a whole number of tokens, 0 or more", wire.HeaderMaxTokens, clip(v))
		}
		m.MaxTokens = n
	}
	switch v := strings.ToLower(strings.TrimSpace(h.Get(wire.HeaderPriority))); v {
	case "", wire.PriorityInteractive, wire.PriorityBatch:
		m.Priority = v
	default:
		return m, "", fmt.Errorf("%s %s: want %s or %s", wire.HeaderPriority, clip(v), wire.PriorityInteractive, wire.PriorityBatch)
	}
	end := strings.TrimSpace(h.Get(wire.HeaderEnd))
	if len(end) > maxEnd {
		return m, "", fmt.Errorf("%s: %d bytes, over the %d-byte limit", wire.HeaderEnd, len(end), maxEnd)
	}
	return m, end, nil
}

// undetected says in HTTP words why Detect could not tell body's
// provider: where a body that is not a transcript stops being JSON, else
// what Detect saw, without its advice for the CLI (give --provider, and
// the list of providers, which the answer gives once itself).
func undetected(err error, body []byte) string {
	if !provider.IsTranscript(body) {
		if why := malformed(body); why != "" {
			return "the body is " + why
		}
	}
	msg, _, _ := strings.Cut(err.Error(), ": give --provider")
	return strings.TrimPrefix(msg, "provider: ")
}

// boolHeader reads an optional true/false header.
func boolHeader(h http.Header, name string) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(h.Get(name))); v {
	case "":
		return false, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	default:
		return false, fmt.Errorf("%s %s: want true or false", name, clip(v))
	}
}

// newResponseID is "http-" and 24 random hex digits.
func newResponseID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "http-" + hex.EncodeToString(b)
}
