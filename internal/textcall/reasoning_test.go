package textcall

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Before issue 16 each of these yielded the draft and the real call: two
// identical calls, which would have executed twice.
func TestRecover_call_drafted_in_reasoning_is_not_recovered(t *testing.T) {
	const hermes = `<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`
	const fn = "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>"
	for _, test := range []struct{ name, text string }{
		{"qwen_think_hermes", "<think>\nThe user wants the weather. I will write " + hermes + "\n</think>\n\n" + hermes},
		{"qwen_think_unclosed_draft", "<think>\nMaybe <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par\n</think>\n\n" + hermes},
		{"qwen_open_tag_in_the_prompt", "The user wants the weather: " + hermes + "\n</think>\n\n" + hermes},
		{"qwen3_coder_xml", "<think>\n<tool_call>\n" + fn + "\n</tool_call>\n</think>\n<tool_call>\n" + fn + "\n</tool_call>"},
		{"qwen3_coder_bare_function", "<think>\n" + fn + "\n</think>\n" + fn},
		{"seed_oss", "<seed:think>I should call it: <seed:tool_call>\n" + fn + "\n</seed:tool_call></seed:think>\n<seed:tool_call>\n" + fn + "\n</seed:tool_call>"},
		{"harmony_analysis_then_commentary",
			`<|channel|>analysis<|message|>I'll send {"name": "get_weather", "arguments": {"city": "Paris"}}.<|end|>` +
				`<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>`},
		{"harmony_analysis_with_start_then_commentary",
			`<|start|>assistant<|channel|>analysis<|message|>Draft: <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call><|end|>` +
				`<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>`},
		{"mistral", "<think>[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}</think>\n[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}"},
		{"magistral_think", "[THINK]draft: [TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}[/THINK][TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}"},
		{"llama3_python_tag", "<think><|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}<|eom_id|></think>\n<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}<|eom_id|>"},
		{"deepseek", "<think>" + dsCallBegin + "get_weather" + dsSep + "{\"city\": \"Paris\"}" + dsCallEnd + "</think>\n" + dsCallBegin + "get_weather" + dsSep + "{\"city\": \"Paris\"}" + dsCallEnd},
		{"fence", "<think>\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```\n</think>\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```"},
		{"pythonic", "<think>[get_weather(city=\"Paris\")]</think>\n[get_weather(city=\"Paris\")]"},
		{"json_in_prose", "<thinking>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</thinking>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}"},
		{"kimi_vl", "◁think▷" + hermes + "◁/think▷" + hermes},
	} {
		t.Run(test.name, func(t *testing.T) {
			calls, discards := Recover(test.text)
			if len(calls) != 1 {
				t.Fatalf("%d calls %v (discards %+v), want exactly 1", len(calls), summary(calls), discards)
			}
			if c := calls[0]; c.Name != "get_weather" || string(c.Arguments) != `{"city":"Paris"}` {
				t.Fatalf("call %s %s", c.Name, c.Arguments)
			}
			if len(discards) != 0 {
				t.Fatalf("discards %+v, want none: a draft in reasoning is not a failed call", discards)
			}
		})
	}
}

func TestRecover_unclosed_reasoning_yields_no_call_and_says_so(t *testing.T) {
	for _, text := range []string{
		"<think>\nI could call <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call> but",
		"Sure.\n<seed:think>" + `{"name": "get_weather", "arguments": {"city": "Paris"}}`,
		`<|channel|>analysis<|message|>{"name": "get_weather", "arguments": {"city": "Paris"}}`,
		`<|start|>assistant<|channel|>analysis to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>`,
		`<|start|>assistant to=functions.get_weather<|channel|>analysis <|constrain|>json<|message|>{"city":"Paris"}<|call|>`,
	} {
		calls, discards := Recover(text)
		if len(calls) != 0 || len(discards) != 1 || !strings.Contains(discards[0].Reason, "not") {
			t.Fatalf("%q: calls %v discards %+v, want no call and one Discard saying why", text, summary(calls), discards)
		}
	}
}

func TestRecover_reasoning_tags_in_values_do_not_hide_calls(t *testing.T) {
	for _, test := range []struct {
		name, text, args string
	}{
		{"open_tag_in_a_string", `<tool_call>{"name": "f", "arguments": {"t": "wrap it in <think> tags"}}</tool_call>`, `{"t":"wrap it in <think> tags"}`},
		{"close_tag_in_a_string", `<tool_call>{"name": "f", "arguments": {"t": "end with </think>"}}</tool_call>`, `{"t":"end with </think>"}`},
		{"closed_pair_in_a_string", `{"name": "f", "arguments": {"t": "<think>x</think>"}}`, `{"t":"<think>x</think>"}`},
		{"prose_about_thinking", `I think so. {"name": "f", "arguments": {"t": "think"}}`, `{"t":"think"}`},
	} {
		t.Run(test.name, func(t *testing.T) {
			calls, discards := Recover(test.text)
			if len(calls) != 1 || string(calls[0].Arguments) != test.args || len(discards) != 0 {
				t.Fatalf("calls %v discards %+v, want f %s", summary(calls), discards, test.args)
			}
		})
	}
}

// TestRecover_no_dialect_recovers_inside_reasoning wraps every fixture
// that holds a call, of every dialect (the shared text formats and each
// testdata/<family>), in <think>…</think> and each other reasoning
// notation (thinkTags): nothing may come out of it, and
// the fixture written again after the reasoning yields its calls once.
func TestRecover_no_dialect_recovers_inside_reasoning(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(textFormats, "*.txt"))
	family, _ := filepath.Glob(filepath.Join("testdata", "*", "*.txt"))
	files = append(files, family...)
	if len(files) < 25 {
		t.Fatalf("%d fixtures", len(files))
	}
	tried := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		if mayReason(text) {
			continue // fixtures of their own reasoning
		}
		want, _ := Recover(text)
		if len(want) == 0 {
			continue
		}
		tried++
		for _, g := range thinkTags() {
			inside := g.open + "\n" + text + "\n" + g.close + "\n"
			if calls, discards := Recover(inside); len(calls) != 0 || len(discards) != 0 {
				t.Errorf("%s inside %s: calls %v discards %+v, want none", f, g.open, summary(calls), discards)
			}
			if calls, _ := Recover(inside + text); len(calls) != len(want) {
				t.Errorf("%s after its own draft in %s: %d calls %v, want %d", f, g.open, len(calls), summary(calls), len(want))
			}
		}
	}
	t.Logf("%d fixtures with calls tried", tried)
	if tried < 20 {
		t.Fatalf("only %d fixtures with calls", tried)
	}
}

// BenchmarkReasoning_4KiB_no_call is what reasoning adds to Recover on
// prose without a call.
func BenchmarkReasoning_4KiB_no_call(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(prose4KiB)))
	r := &recoverer{text: prose4KiB}
	for b.Loop() {
		r.reasoning()
	}
	if len(r.claimed) != 0 {
		b.Fatal(r.claimed)
	}
}

// BenchmarkReasoning_4KiB_markup_no_tag is the pre-check on prose full of
// '<' (HTML, comparisons) and near-misses of the tags, none of them one.
func BenchmarkReasoning_4KiB_markup_no_tag(b *testing.B) {
	para := `<p>If a < b then <b>think</b> of <channel> and <|start|> in <mm>, [THINKING] K] x</p> `
	text := strings.Repeat(para, 4096/len(para)+1)[:4096]
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	r := &recoverer{text: text}
	for b.Loop() {
		r.reasoning()
	}
	if len(r.claimed) != 0 {
		b.Fatal(r.claimed)
	}
}

func TestMayReason_sees_every_tag_and_not_prose(t *testing.T) {
	for _, g := range thinkTags() {
		for _, tag := range []string{g.open, g.close} {
			if !mayReason("some text " + tag + " more") {
				t.Errorf("mayReason misses %s", tag)
			}
		}
	}
	if !mayReason("x" + harmonyAnalysisTag + "<|message|>") {
		t.Error("mayReason misses the harmony analysis channel")
	}
	if mayReason(prose4KiB) || mayReason("I think [THINKING] is <b>bold</b> K] [1]") {
		t.Error("mayReason sees a tag in prose")
	}
}

// TestRecover_many_reasoning_tags_are_bounded: repeated, unclosed or
// unbalanced tags keep the reasoning scan linear (a quadratic scan of 1 MiB
// would stall this test) and the report small.
func TestRecover_many_reasoning_tags_are_bounded(t *testing.T) {
	const n = MaxTextBytes
	for _, test := range []struct{ name, text string }{
		{"unclosed_mid_line", strings.Repeat("x <think> ", n/10)},
		{"closed_pairs", strings.Repeat("<think></think>", n/15)},
		{"orphan_closes", strings.Repeat("</think>\n", n/9)},
		{"harmony_analysis", strings.Repeat("<|channel|>analysis<|message|>x<|end|>", n/38)},
		{"harmony_unclosed", "a " + strings.Repeat("<|channel|>analysis", n/19)},
		{"every_tag", strings.Repeat("x <seed:think> [THINK] ◁think▷ <thinking> ", n/45)},
		{"every_new_tag", strings.Repeat("x <|inner_prefix|> <|channel> <|START_THINKING|> <mm:think> ", n/60)},
		{"new_orphan_closes", strings.Repeat("<|inner_suffix|>\n<channel|>\n<|END_THINKING|>\n</mm:think>\n", n/60)},
		{"granite_response_marker_repeated", "Here is my thought process:" + strings.Repeat(" my response:", n/13)},
		{"unclosed_think_then_kimi_sections", strings.Repeat("<think>\n<|tool_calls_section_begin|>", n/36)},
	} {
		t.Run(test.name, func(t *testing.T) {
			calls, discards := Recover(test.text)
			if len(calls) != 0 || len(discards) > 2 {
				t.Fatalf("%d calls, %d discards, want none and at most 2", len(calls), len(discards))
			}
		})
	}
}
