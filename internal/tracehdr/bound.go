package tracehdr

import (
	"context"

	"go.opentelemetry.io/otel/trace"
)

// MaxTraceState bounds the tracestate toolgate sends on (the W3C
// recommendation's 512 bytes). A valid tracestate may hold 32 members of
// 512 bytes each: carried whole onto every output and dead letter, a
// producer's one would grow each of them by up to 16 KiB, past what a
// message sized to fit NATS's max payload can take.
const MaxTraceState = 512

// memberCut is the size over which a member goes first (W3C: entries over
// 128 characters are removed before others).
const memberCut = 128

// bounded is ctx with its span context's tracestate cut to MaxTraceState
// (cutTraceState); ctx itself when it needs no cut.
func bounded(ctx context.Context) context.Context {
	sc := trace.SpanContextFromContext(ctx)
	if ts := sc.TraceState(); len(ts.String()) > MaxTraceState {
		return trace.ContextWithSpanContext(ctx, sc.WithTraceState(cutTraceState(ts)))
	}
	return ctx
}

// cutTraceState cuts ts to at most MaxTraceState bytes as the W3C
// recommends: members over 128 bytes go first, then the others, each from
// the end (the oldest first); the order of those kept is unchanged.
func cutTraceState(ts trace.TraceState) trace.TraceState {
	var keys []string
	ts.Walk(func(k, v string) bool {
		keys = append(keys, k)
		return true
	})
	for i := len(keys) - 1; i >= 0 && len(ts.String()) > MaxTraceState; i-- {
		if len(keys[i])+1+len(ts.Get(keys[i])) > memberCut {
			ts = ts.Delete(keys[i])
		}
	}
	for i := len(keys) - 1; i >= 0 && len(ts.String()) > MaxTraceState; i-- {
		ts = ts.Delete(keys[i])
	}
	return ts
}
