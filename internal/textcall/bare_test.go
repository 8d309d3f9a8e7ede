package textcall

import "testing"

// OLMo 3's pythonic calls without <function_calls> are read only when the
// caller names the tools, every call names one, and the calls are all of
// the answer (issue 32: vLLM's olmo3 cases with a bare call were missed).
func TestRecoverWith_olmo3_bare_calls_of_known_tools(t *testing.T) {
	known := func(n string) bool { return n == "get_weather" || n == "get_time" }
	read := []struct {
		text  string
		calls int
	}{
		{`get_weather(location="SF")`, 1},
		{"  get_weather(location=\"SF\", days=3)\nget_time(tz='UTC')\n", 2},
		{"<think>The user wants weather.</think>\nget_weather(location=\"SF\")", 1},
		{`[get_weather(location="SF"), get_time(tz="UTC")]`, 2},
	}
	for _, c := range read {
		calls, discards := RecoverWith(c.text, Options{Known: known})
		if len(calls) != c.calls || len(discards) != 0 {
			t.Errorf("%q: calls %v, discards %+v; want %d calls", c.text, summary(calls), discards, c.calls)
			continue
		}
		if calls[0].Name != "get_weather" || string(calls[0].Arguments) == "{}" {
			t.Errorf("%q: first call %s %s", c.text, calls[0].Name, calls[0].Arguments)
		}
	}
	prose := []string{
		`I would call get_weather(location="SF") but it is down.`,
		`get_weather(location="SF") is how you call it.`,
		`delete_all(confirm=True)`,                      // not a known tool
		`get_weather(location="SF")` + "\n" + `rm(x=1)`, // one unknown: none
		`get_weather(location="SF"`,                     // cut
		`get_weather("SF")`,                             // positional
	}
	for _, text := range prose {
		if calls, _ := RecoverWith(text, Options{Known: known}); len(calls) != 0 {
			t.Errorf("%q: calls %v; want none", text, summary(calls))
		}
	}
	if calls, _ := Recover(`get_weather(location="SF")`); len(calls) != 0 {
		t.Errorf("without the tools a bare call was read: %v", summary(calls))
	}
}

// Gemma 4's call grammar written without its tokens is read only when the
// call stands alone on its line.
func TestRecover_gemma_bare_only_standing_alone(t *testing.T) {
	for _, text := range []string{
		"Use call:get_weather{location:Paris} to ask.",
		"call:get_weather{location:Paris} is FunctionGemma's grammar.",
		"recall:get_weather{location:Paris}",
	} {
		if calls, discards := Recover(text); len(calls)+len(discards) != 0 {
			t.Errorf("%q: calls %v, discards %+v", text, summary(calls), discards)
		}
	}
}
