// Package tracehdr carries W3C trace context (traceparent, tracestate) in
// NATS message headers. It is a leaf package, so the executors
// (internal/execute) can inject it without importing the tracing setup.
package tracehdr

import (
	"context"
	"net/http"
	"strings"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/propagation"
)

// Propagator is the W3C trace context propagator every hop uses.
func Propagator() propagation.TextMapPropagator { return propagation.TraceContext{} }

// Carrier is a propagation.TextMapCarrier over nats.Header. nats.Header keys
// are case-sensitive and http.Header's canonicalization would turn
// traceparent into Traceparent, which a W3C reader of NATS headers does not
// find: Set keeps the key exactly as given (lowercase) and drops any other
// spelling of it; Get takes the exact key first, then any spelling.
type Carrier nats.Header

// Get returns the first value of key.
func (c Carrier) Get(key string) string {
	if v := c[key]; len(v) > 0 {
		return v[0]
	}
	for k, v := range c {
		if len(v) > 0 && strings.EqualFold(k, key) {
			return v[0]
		}
	}
	return ""
}

// Set replaces every spelling of key with key: value.
func (c Carrier) Set(key, value string) {
	for k := range c {
		if k != key && strings.EqualFold(k, key) {
			delete(c, k)
		}
	}
	c[key] = []string{value}
}

// Keys lists the header keys.
func (c Carrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// Inject writes ctx's span context into h (nothing when ctx has none),
// its tracestate cut to MaxTraceState (bounded).
func Inject(ctx context.Context, h nats.Header) {
	if h != nil {
		Propagator().Inject(bounded(ctx), Carrier(h))
	}
}

// Extract returns ctx with the remote span context h carries, if any.
func Extract(ctx context.Context, h nats.Header) context.Context {
	if h == nil {
		return ctx
	}
	return Propagator().Extract(ctx, Carrier(h))
}

// InjectHTTP writes ctx's span context into an HTTP request's headers.
func InjectHTTP(ctx context.Context, h http.Header) {
	Propagator().Inject(bounded(ctx), propagation.HeaderCarrier(h))
}
