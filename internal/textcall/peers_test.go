package textcall

import "testing"

// Peer parsers whose notation toolgate reads under another dialect's name
// (issue 32): one case each, named after the peer's parser, with the
// dialect that reads it. Own text written from each notation.
func TestRecover_peer_notations_read_under_another_name(t *testing.T) {
	for _, c := range []struct {
		peer, format, text, name, args string
	}{
		{"vllm_deepseek_v4", "deepseek-dsml",
			"<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"bash\">\n<｜DSML｜parameter name=\"command\" string=\"true\">ls</｜DSML｜parameter>\n<｜DSML｜parameter name=\"timeout\" string=\"false\">15</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
			"bash", `{"command":"ls","timeout":15}`},
		{"vllm_deepseek_v4_ascii_bars", "deepseek-dsml",
			"<|DSML|tool_calls>\n<|DSML|invoke name=\"bash\">\n<|DSML|parameter name=\"command\" string=\"true\">ls</|DSML|parameter>\n</|DSML|invoke>\n</|DSML|tool_calls>",
			"bash", `{"command":"ls"}`},
		{"vllm_granite4", "hermes",
			"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
			"get_weather", `{"city":"Paris"}`},
		{"ollama_qwen3_5", "qwen-xml",
			"<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
			"get_weather", `{"city":"Paris"}`},
		{"vllm_cohere_command3", "cohere",
			"<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n]<|END_ACTION|>",
			"get_weather", `{"city":"Paris"}`},
		{"vllm_cohere_command4", "cohere",
			"<|START_THINKING|>Weather first.<|END_THINKING|><|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}]<|END_ACTION|>",
			"get_weather", `{"city":"Paris"}`},
		{"ollama_ministral", "mistral",
			"[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}",
			"get_weather", `{"city":"Paris"}`},
		{"ollama_glm_4_6", "glm",
			"<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
			"get_weather", `{"city":"Paris"}`},
	} {
		t.Run(c.peer, func(t *testing.T) {
			calls, discards := Recover(c.text)
			if len(calls) != 1 || len(discards) != 0 {
				t.Fatalf("calls %v, discards %+v", summary(calls), discards)
			}
			if calls[0].Format != c.format || calls[0].Name != c.name || string(calls[0].Arguments) != c.args {
				t.Fatalf("%s %s %s, want %s %s %s", calls[0].Format, calls[0].Name, calls[0].Arguments, c.format, c.name, c.args)
			}
		})
	}
}

// Where toolgate and a peer part on purpose (the dialect table says so):
// an unclosed MiniMax block (M2's <minimax:tool_call>, M1's <tool_calls>)
// is refused, where a lenient peer reads its calls; of two JSON objects in prose the call-shaped one is read, where
// Ollama sees no call.
func TestRecover_peer_disagreements_kept(t *testing.T) {
	calls, discards := Recover("<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"a\">1</parameter>\n</invoke>")
	if len(calls) != 0 || len(discards) != 1 {
		t.Fatalf("unclosed MiniMax: calls %v, discards %+v; want refused", summary(calls), discards)
	}
	calls, discards = Recover("<tool_calls>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n")
	if len(calls) != 0 || len(discards) != 1 {
		t.Fatalf("unclosed MiniMax-M1 <tool_calls>: calls %v, discards %+v; want refused", summary(calls), discards)
	}
	calls, _ = Recover(`{"name": "jeff"}{"name": "get_conditions", "arguments": {"a": 1}}`)
	if len(calls) != 1 || calls[0].Name != "get_conditions" {
		t.Fatalf("two objects: calls %v", summary(calls))
	}
}
