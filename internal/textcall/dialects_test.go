package textcall

import "testing"

// Every dialect is named once, and each name is a Format that Recover
// reports for a call written in it.
func TestDialects_named_once_in_scan_order(t *testing.T) {
	samples := map[string]string{
		"deepseek": "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\":1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
		"harmony":  "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\":1}<|call|>",
		"hermes":   "<tool_call>{\"name\":\"f\",\"arguments\":{\"a\":1}}</tool_call>",
		"qwen-xml": "<function=f><parameter=a>1</parameter></function>",
		"mistral":  "[TOOL_CALLS][{\"name\":\"f\",\"arguments\":{\"a\":1}}]",
		"llama3":   "<|python_tag|>{\"name\":\"f\",\"parameters\":{\"a\":1}}",
		"fence":    "```json\n{\"name\":\"f\",\"arguments\":{\"a\":1}}\n```",
		"pythonic": "[f(a=1)]",
		"json":     "Sure: {\"name\":\"f\",\"arguments\":{\"a\":1}} done",

		"kimi":          "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\":1}<|tool_call_end|><|tool_calls_section_end|>",
		"deepseek-dsml": "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"a\" string=\"false\">1</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
		"glm":           "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>",
		"seed-oss":      "<seed:tool_call>\n<function=f>\n<parameter=a>1</parameter>\n</function>\n</seed:tool_call>",
		"apertus":       "<|tools_prefix|>[{\"f\": {\"a\": 1}}]<|tools_suffix|>",
		"olmo3":         "<function_calls>\nf(a=1)\n</function_calls>",
		"gemma":         "<start_function_call>call:f{a:1}<end_function_call>",

		"llama3-function": "<function=f>{\"a\":1}</function>",
		"minimax":         "<minimax:tool_call><invoke name=\"f\"><parameter name=\"a\">1</parameter></invoke></minimax:tool_call>",
		"invoke":          "<function_calls>\n<invoke name=\"f\">\n<parameter name=\"a\">1</parameter>\n</invoke>\n</function_calls>",
		"step3":           "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"f\"><steptml:parameter name=\"a\">1</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
		"granite":         "<|tool_call|>[{\"name\":\"f\",\"arguments\":{\"a\":1}}]",
		"granite-fc":      "<function_call> {\"name\":\"f\",\"arguments\":{\"a\":1}}",
		"phi4-mini":       "functools[{\"name\":\"f\",\"arguments\":{\"a\":1}}]",
		"jamba":           "<tool_calls>[{\"name\":\"f\",\"arguments\":{\"a\":1}}]</tool_calls>",
		"nemotron":        "<TOOLCALL>[{\"name\":\"f\",\"arguments\":{\"a\":1}}]</TOOLCALL>",
		"longcat":         "<longcat_tool_call>{\"name\":\"f\",\"arguments\":{\"a\":1}}</longcat_tool_call>",
		"cohere":          "<|START_ACTION|>[{\"tool_call_id\":\"0\",\"tool_name\":\"f\",\"parameters\":{\"a\":1}}]<|END_ACTION|>",
		"internlm":        "<|action_start|><|plugin|>{\"name\":\"f\",\"parameters\":{\"a\":1}}<|action_end|>",
		"llama4":          "<|python_start|>[f(a=1)]<|python_end|>",
		"functionary":     ">>>f\n{\"a\":1}",
		"qwen-agent":      "✿FUNCTION✿: f\n✿ARGS✿: {\"a\":1}\n✿RESULT✿",
		"gigachat":        "function call<|role_sep|>\n{\"name\":\"f\",\"arguments\":{\"a\":1}}",
		"minicpm":         "<|tool_call_start|>\n```python\nf(a=1)\n```\n<|tool_call_end|>",
		"glimmer":         "<atem:function_calls>\n<atem:invoke name=\"f\">\n<atem:parameter name=\"a\">1</atem:parameter>\n</atem:invoke>\n</atem:function_calls>",
		"hunyuan":         "<tool_calls>\n<tool_call>f<tool_sep>\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>\n</tool_calls>",
		"lfm2":            "<|tool_call_start|>[f(a=1)]<|tool_call_end|>",
	}
	seen := map[string]bool{}
	for _, d := range dialects() {
		if seen[d.name] || d.scan == nil {
			t.Errorf("dialect %q is listed twice or has no scanner", d.name)
		}
		seen[d.name] = true
		text, ok := samples[d.name]
		if !ok {
			t.Errorf("dialect %q has no sample here", d.name)
			continue
		}
		calls, discards := Recover(text)
		if len(calls) != 1 || calls[0].Format != d.name || calls[0].Name != "f" {
			t.Errorf("%s: calls %+v, discards %+v", d.name, calls, discards)
		}
	}
	if len(seen) != len(samples) {
		t.Errorf("%d dialects, %d samples", len(seen), len(samples))
	}
}
