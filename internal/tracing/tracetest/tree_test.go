package tracetest_test

import (
	"testing"

	"github.com/toolgate/toolgate/internal/tracing/tracetest"
)

// Tree nests each span under its parent, leaves out other traces, names
// the outside parent of a root and prints the key attributes only.
func TestTree_nests_spans_by_parent_link(t *testing.T) {
	spans := []tracetest.Span{
		{Service: "toolgate-parse", Name: "toolgate.parse", TraceID: "t1", SpanID: "b", Parent: "a", Attrs: map[string]string{"toolgate.call.id": "c1", "other": "x"}},
		{Service: "toolgate-accumulate", Name: "toolgate.accumulate", TraceID: "t1", SpanID: "a", Parent: "p0"},
		{Service: "other", Name: "elsewhere", TraceID: "t2", SpanID: "z"},
		{Service: "toolgate-execute", Name: "execute_tool get_weather", TraceID: "t1", SpanID: "d", Parent: "c", Attrs: map[string]string{"gen_ai.tool.name": "get_weather"}},
		{Service: "toolgate-validate", Name: "toolgate.validate", TraceID: "t1", SpanID: "c", Parent: "b", Attrs: map[string]string{"toolgate.status": "validated"}},
	}
	want := `trace t1 (4 spans)
  toolgate.accumulate [toolgate-accumulate] span=a parent=p0
    toolgate.parse [toolgate-parse] span=b toolgate.call.id=c1
      toolgate.validate [toolgate-validate] span=c toolgate.status=validated
        execute_tool get_weather [toolgate-execute] span=d gen_ai.tool.name=get_weather
`
	if got := tracetest.Tree(spans, "t1"); got != want {
		t.Errorf("Tree:\n%s\nwant:\n%s", got, want)
	}
}

// Spans whose parent links form a cycle are each printed once, and the
// formatter returns.
func TestTree_a_parent_cycle_prints_each_span_once(t *testing.T) {
	spans := []tracetest.Span{
		{Name: "x", TraceID: "t", SpanID: "1", Parent: "2"},
		{Name: "y", TraceID: "t", SpanID: "2", Parent: "1"},
	}
	want := "trace t (2 spans)\n  x [] span=1 parent=2\n    y [] span=2\n"
	if got := tracetest.Tree(spans, "t"); got != want {
		t.Errorf("Tree:\n%q\nwant:\n%q", got, want)
	}
}
