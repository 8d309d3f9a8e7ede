package textcall

import (
	"strings"
	"testing"
)

// Every reasoning notation the families in use emit (their chat templates
// and vLLM's reasoning parsers): a call drafted inside the reasoning and
// then written for real is exactly one call, and the draft is no Discard.
// Before, the Apertus, Gemma 4, Command A, MiniMax M3, Granite 3.2 and
// unclosed-Kimi cases yielded the draft too: two calls.
func TestRecover_draft_in_each_reasoning_notation_then_the_real_call_is_one_call(t *testing.T) {
	hermes := `<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>`
	apertus := `<|tools_prefix|>[{"f": {"a": 1}}]<|tools_suffix|>`
	gemma4 := "<|tool_call>call:f{a:1}<tool_call|>"
	cohere := `<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": {"a": 1}}]<|END_ACTION|>`
	kimi := "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\": 1}<|tool_call_end|><|tool_calls_section_end|>"
	granite := `<|tool_call|>[{"name": "f", "arguments": {"a": 1}}]`
	seed := "<seed:tool_call>\n<function=f>\n<parameter=a>1</parameter>\n</function>\n</seed:tool_call>"
	minimax := "<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"a\">1</parameter>\n</invoke>\n</minimax:tool_call>"
	for _, test := range []struct{ name, text string }{
		// swiss-ai/Apertus: <|inner_prefix|>…<|inner_suffix|>.
		{"apertus", "<|inner_prefix|>I will send " + apertus + " next.<|inner_suffix|>" + apertus},
		{"apertus_hermes_draft", "<|inner_prefix|>Maybe " + hermes + "<|inner_suffix|>" + apertus},
		// Gemma 4: <|channel>thought\n…<channel|>.
		{"gemma4", "<|channel>thought\nThe call is " + gemma4 + "\n<channel|>" + gemma4},
		{"gemma4_hermes_draft", "<|channel>thought\n" + hermes + "<channel|>" + gemma4},
		// Cohere Command A Reasoning: <|START_THINKING|>…<|END_THINKING|>.
		{"command_a_reasoning", "<|START_THINKING|>Plan: " + cohere + "<|END_THINKING|>" + cohere},
		// MiniMax M3: <mm:think>…</mm:think>, the open tag maybe prefilled.
		{"minimax_m3", "<mm:think>Draft " + minimax + "</mm:think>" + minimax},
		{"minimax_m3_prefilled", "Draft " + minimax + "\n</mm:think>\n" + minimax},
		// Granite 3.2: plain-text markers, both present.
		{"granite32", "Here is my thought process:\nI should send " + granite + "\n\nHere is my response:\n" + granite},
		{"granite32_heres", "Here's my thought process: " + hermes + " Here's my response: " + granite},
		// Kimi K2: reasoning ends at the tool-call section when </think> never comes.
		{"kimi_k2_unclosed_think", "<think>I need f: " + hermes + " is what I'd write elsewhere." + kimi},
		// Notations already claimed, kept here so that each family is tried.
		{"hunyuan_think_answer", "<think>\nDraft " + hermes + "\n</think>\n<answer>\n" + hermes + "\n</answer>"},
		{"ernie45_response", "Draft " + hermes + "\n</think>\n\n<response>\n" + hermes + "\n</response>"},
		{"step3_open_in_prompt", "Draft " + hermes + "</think>" + hermes},
		{"minimax_m2_open_in_prompt", "Draft " + minimax + "\n</think>\n\n" + minimax},
		{"olmo3", "<think>Draft " + hermes + "</think>\n" + hermes},
		{"seed_oss_budget_reflect", "<seed:think>Plan " + seed + "<seed:cot_budget_reflect>I have used 120 tokens.</seed:cot_budget_reflect>" + seed + "</seed:think>" + seed},
		{"mistral_think", "[THINK]Draft " + hermes + "[/THINK]" + hermes},
		{"kimi_vl", "◁think▷Draft " + hermes + "◁/think▷" + hermes},
		{"gpt_oss", `<|channel|>analysis<|message|>Draft ` + hermes + `<|end|><|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a":1}<|call|>`},
	} {
		t.Run(test.name, func(t *testing.T) {
			calls, discards := Recover(test.text)
			if len(calls) != 1 || calls[0].Name != "f" || string(calls[0].Arguments) != `{"a":1}` {
				t.Fatalf("calls %v (discards %+v), want exactly f {\"a\":1}", summary(calls), discards)
			}
			if len(discards) != 0 {
				t.Fatalf("discards %+v, want none: a draft in reasoning is not a failed call", discards)
			}
		})
	}
}

// Granite's markers are plain text, so they count only as Granite writes
// them: the thought marker opening the output and the response marker
// after it. Prose with one of them, or with both mid-text, keeps its calls.
func TestRecover_granite_markers_hide_nothing_unless_both_open_the_output(t *testing.T) {
	granite := `<|tool_call|>[{"name": "f", "arguments": {"a": 1}}]`
	for _, test := range []struct {
		name, text string
		want       int
	}{
		{"thought_marker_alone", "Here is my thought process:\n" + granite, 1},
		{"response_marker_alone", granite + "\nHere is my response: done.", 1},
		{"markers_mid_prose", "As I said, here is my thought process: " + granite + " Here is my response: ok", 1},
		{"markers_after_a_line", "Sure.\nHere is my thought process: " + granite + "\nHere is my response: ok", 1},
		{"response_before_thought", "Here is my response: " + granite + "\nHere is my thought process: ok", 1},
		{"both_then_call", "  Here is my thought process: think.\nHere is my response:\n" + granite, 1},
		{"both_with_draft", "Here is my thought process: " + granite + "\nHere is my response: nothing to call.", 0},
	} {
		t.Run(test.name, func(t *testing.T) {
			calls, discards := Recover(test.text)
			if len(calls) != test.want || len(discards) != 0 {
				t.Fatalf("calls %v discards %+v, want %d calls", summary(calls), discards, test.want)
			}
		})
	}
}

// An unclosed reasoning block of a new notation claims the rest of the
// text and says so, like <think> does.
func TestRecover_unclosed_reasoning_of_each_new_notation_says_so(t *testing.T) {
	call := `{"name": "f", "arguments": {"a": 1}}`
	for _, open := range []string{"<|inner_prefix|>", "<|channel>thought\n", "<|START_THINKING|>", "<mm:think>"} {
		calls, discards := Recover(open + "Draft " + call)
		if len(calls) != 0 || len(discards) != 1 || !strings.Contains(discards[0].Reason, "never closed") {
			t.Errorf("%q: calls %v discards %+v, want no call and one Discard", open, summary(calls), discards)
		}
	}
}

// Kimi's implicit end applies only to its tool-call section: another
// unclosed <think> still claims the rest of the text.
func TestRecover_unclosed_think_ends_only_at_a_kimi_section(t *testing.T) {
	kimi := "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\": 1}<|tool_call_end|><|tool_calls_section_end|>"
	if calls, discards := Recover("<think>\nPlan " + kimi); len(calls) != 1 || len(discards) != 0 {
		t.Fatalf("kimi section after an unclosed <think>: calls %v discards %+v, want 1 call", summary(calls), discards)
	}
	if calls, discards := Recover("<think>\nPlan <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>"); len(calls) != 0 || len(discards) != 1 {
		t.Fatalf("hermes after an unclosed <think>: calls %v discards %+v, want none and a Discard", summary(calls), discards)
	}
}
