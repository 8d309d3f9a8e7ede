package gates

import "context"

type circuitOpenKey struct{}

// WithCircuitOpen marks ctx: the call's executor group fails fast and its
// circuit is open (the execute stage's breaker, issue 38), so the call ends
// execution_failed with the error why and is not sent.
func WithCircuitOpen(ctx context.Context, why string) context.Context {
	return context.WithValue(ctx, circuitOpenKey{}, why)
}

// circuitOpen is what WithCircuitOpen put in ctx; "": run the call.
func circuitOpen(ctx context.Context) string {
	why, _ := ctx.Value(circuitOpenKey{}).(string)
	return why
}
