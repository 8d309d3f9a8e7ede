package tracehdr

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/trace"
)

const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

func TestCarrier_keeps_traceparent_lowercase(t *testing.T) {
	in := nats.Header{}
	in["traceparent"] = []string{parent}
	in["tracestate"] = []string{"vendor=x"}
	ctx := Extract(context.Background(), in)
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || sc.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" {
		t.Fatalf("extracted %v from %v", sc, in)
	}
	out := nats.Header{}
	out.Set("Traceparent", "00-stale") // a canonicalized spelling left by someone else
	Inject(ctx, out)
	if got := out["traceparent"]; len(got) != 1 || got[0] != parent {
		t.Fatalf("traceparent = %q in %v", got, out)
	}
	if _, ok := out["Traceparent"]; ok {
		t.Fatalf("canonical spelling kept beside the lowercase key: %v", out)
	}
	if got := out["tracestate"]; len(got) != 1 || got[0] != "vendor=x" {
		t.Fatalf("tracestate = %q", got)
	}
}

func TestCarrier_reads_a_canonicalized_key(t *testing.T) {
	in := nats.Header{}
	in.Set("Traceparent", parent)
	if sc := trace.SpanContextFromContext(Extract(context.Background(), in)); !sc.IsValid() {
		t.Fatal("Traceparent not read")
	}
}

func TestCarrier_hostile_values_are_ignored(t *testing.T) {
	for _, v := range []string{"", "garbage", "00-00000000000000000000000000000000-0000000000000000-01", "ff-" + parent[3:]} {
		in := nats.Header{"traceparent": {v}}
		if sc := trace.SpanContextFromContext(Extract(context.Background(), in)); sc.IsValid() {
			t.Fatalf("%q accepted as %v", v, sc)
		}
	}
	Inject(context.Background(), nil) // no panic
	if Extract(context.Background(), nil) == nil {
		t.Fatal("nil ctx")
	}
}
