package stage

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/streams"
)

// Before issue 16 the draft inside <think> was recovered too: two calls,
// and the tool ran twice.
func TestPipeline_call_drafted_in_reasoning_runs_once(t *testing.T) {
	p := startPipeline(t)
	call := `<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`
	text := "<think>\nThe user wants the weather; I will write " + call + "\n</think>\n\n" + call
	p.publish("think-once", "ollama", ollamaText(text), streams.HeaderTolerant, "true")
	rs := p.waitResults("think-once", 1)
	if rs[0]["status"] != "executed" || rs[0]["tool"] != "get_weather" {
		t.Fatalf("%v: want the one real call executed", rs[0])
	}
	if n := len(p.results("think-once")); n != 1 {
		t.Fatalf("%d results, want 1 (the draft in reasoning is not a call)", n)
	}
	if n := p.executed.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want once", n)
	}
}

// Before issue 16 <parameter=city>94107</parameter> became the number 94107
// and the call was discarded (city: must be string, got number).
func TestPipeline_xml_parameter_follows_the_schema(t *testing.T) {
	p := startPipeline(t)
	text := "<tool_call>\n<function=get_weather>\n<parameter=city>\n94107\n</parameter>\n</function>\n</tool_call>"
	p.publish("xml-typed", "ollama", ollamaText(text), streams.HeaderTolerant, "true")
	rs := p.waitResults("xml-typed", 1)
	if rs[0]["status"] != "executed" {
		t.Fatalf("%v: want executed with city the string 94107", rs[0])
	}
	if h := fmt.Sprint(rs[0]["history"]); !strings.Contains(h, "city: kept as string (schema type string)") {
		t.Fatalf("history %s does not record the conversion", h)
	}
}
