package textcall

import (
	"testing"
)

// Gemma 3's ```tool_code calls name the tool without the default_api.
// prefix its prompts declare the tools under.
func TestRecover_gemma_tool_code_drops_default_api(t *testing.T) {
	checkCases(t, []fixCase{
		{"bare", "```tool_code\ndefault_api.get_weather(city='Paris')\n```", []nameArgs{{"get_weather", `{"city":"Paris"}`}}, 0},
		{"print", "```tool_code\nprint(default_api.get_weather(city='Paris'))\n```", []nameArgs{{"get_weather", `{"city":"Paris"}`}}, 0},
		{"list", "```tool_code\n[default_api.f(), default_api.g(a=1)]\n```", []nameArgs{{"f", `{}`}, {"g", `{"a":1}`}}, 0},
		{"other_prefix_kept", "```tool_code\nweather_api.get(city='Paris')\n```", []nameArgs{{"weather_api.get", `{"city":"Paris"}`}}, 0},
		{"prefix_alone_kept", "```tool_code\ndefault_api.()\n```", []nameArgs{{"default_api.", `{}`}}, 0},
	})
}
