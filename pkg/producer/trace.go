package producer

import (
	"context"
	"fmt"
	"strings"
)

// W3C trace context header keys, lowercase as the W3C spelling is: NATS
// header keys are case-sensitive.
const (
	HeaderTraceParent = "traceparent"
	HeaderTraceState  = "tracestate"
)

// MaxTraceState bounds a tracestate (the W3C recommendation's 512 bytes).
const MaxTraceState = 512

// TraceInjector writes the W3C trace context of ctx into carrier (keys
// traceparent, tracestate). OpenTelemetry's propagators fit it as
//
//	func(ctx context.Context, c map[string]string) {
//		otel.GetTextMapPropagator().Inject(ctx, propagation.MapCarrier(c))
//	}
type TraceInjector func(ctx context.Context, carrier map[string]string)

// TraceFrom returns m with the trace context inject finds in ctx (the
// caller's current span), unless m has a TraceParent of its own:
//
//	err := p.PublishResponse(ctx, m.TraceFrom(ctx, inject), body)
//
// What inject writes that is not a valid traceparent is not taken (nor its
// tracestate); a tracestate that is not valid is left out.
func (m Meta) TraceFrom(ctx context.Context, inject TraceInjector) Meta {
	if m.TraceParent != "" || inject == nil {
		return m
	}
	c := map[string]string{}
	inject(ctx, c)
	if ValidTraceParent(c[HeaderTraceParent]) {
		m.TraceParent = c[HeaderTraceParent]
		if ValidTraceState(c[HeaderTraceState]) {
			m.TraceState = c[HeaderTraceState]
		}
	}
	return m
}

// traceHeader checks m's trace context and sets it on h.
func (m Meta) traceHeader(h map[string][]string) error {
	if m.TraceParent == "" {
		if m.TraceState != "" {
			return fmt.Errorf("producer: response %s: a tracestate without a traceparent", m.ResponseID)
		}
		return nil
	}
	if !ValidTraceParent(m.TraceParent) {
		return fmt.Errorf("producer: response %s: traceparent %.80q: want 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>, ids not all zero", m.ResponseID, m.TraceParent)
	}
	if !ValidTraceState(m.TraceState) {
		return fmt.Errorf("producer: response %s: tracestate %.80q: want at most 32 key=value members, %d bytes in all", m.ResponseID, m.TraceState, MaxTraceState)
	}
	h[HeaderTraceParent] = []string{m.TraceParent}
	if m.TraceState != "" {
		h[HeaderTraceState] = []string{m.TraceState}
	}
	return nil
}

// ValidTraceParent reports whether s is a W3C traceparent: version 00 is
// exactly 00-<32 hex>-<16 hex>-<2 hex>, lowercase, with neither id all
// zeros; a later version (not ff) may have more after a '-'.
func ValidTraceParent(s string) bool {
	if len(s) < 55 || (len(s) > 55 && (s[:2] == "00" || s[55] != '-')) || s[:2] == "ff" {
		return false
	}
	if s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return false
	}
	return lowerHex(s[:2]) && lowerHex(s[3:35]) && lowerHex(s[36:52]) && lowerHex(s[53:55]) &&
		strings.Trim(s[3:35], "0") != "" && strings.Trim(s[36:52], "0") != ""
}

// ValidTraceState reports whether s is empty or a W3C tracestate of at most
// MaxTraceState bytes: up to 32 comma-separated key=value members, keys
// unique.
func ValidTraceState(s string) bool {
	if s == "" {
		return true
	}
	if len(s) > MaxTraceState {
		return false
	}
	seen := map[string]bool{}
	for _, member := range strings.Split(s, ",") {
		member = strings.Trim(member, " \t")
		if member == "" {
			continue
		}
		k, v, ok := strings.Cut(member, "=")
		if !ok || !stateKey(k) || !stateValue(v) || seen[k] {
			return false
		}
		seen[k] = true
	}
	return len(seen) > 0 && len(seen) <= 32
}

// stateKey: lcalpha then up to 255 of [a-z0-9_-*/], or tenant@system.
func stateKey(k string) bool {
	tenant, system, multi := strings.Cut(k, "@")
	if !multi {
		return len(k) <= 256 && k != "" && 'a' <= k[0] && k[0] <= 'z' && keyChars(k)
	}
	return len(tenant) >= 1 && len(tenant) <= 241 && keyChars(tenant) &&
		len(system) >= 1 && len(system) <= 14 && 'a' <= system[0] && system[0] <= 'z' && keyChars(system)
}

func keyChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '*' || c == '/') {
			return false
		}
	}
	return true
}

// stateValue: 1 to 256 printable ASCII bytes but ',' and '=', not ending
// in a space.
func stateValue(v string) bool {
	if v == "" || len(v) > 256 || v[len(v)-1] == ' ' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e || c == ',' || c == '=' {
			return false
		}
	}
	return true
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
