package textcall

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// batchA are the families whose calls must be closed to count.
func batchA() []string {
	return []string{"kimi-k2", "glm", "gemma", "olmo3", "apertus", "deepseek-v32", "seed-oss", "deepseek-v31"}
}

// TestRecover_a_cut_text_never_yields_a_call_it_had_not_closed cuts every
// fixture of these families at every byte: a call recovered from a prefix is
// one the whole text has, at the same span, and that span ends inside the
// prefix. A prefix that stops before a call's closing token never completes it.
func TestRecover_a_cut_text_never_yields_a_call_it_had_not_closed(t *testing.T) {
	n := 0
	for _, fam := range batchA() {
		files, _ := filepath.Glob(filepath.Join("testdata", fam, "*.txt"))
		if len(files) < 3 {
			t.Fatalf("%s: %d fixtures", fam, len(files))
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			text := string(raw)
			full, _ := Recover(text)
			for k := 0; k < len(text); k++ {
				calls, discards := Recover(text[:k])
				for _, c := range calls {
					if !hasCall(full, c) || c.End > k {
						t.Fatalf("%s cut at %d: %s %s at %d..%d is not a call the whole text closed by then", f, k, c.Name, c.Arguments, c.Start, c.End)
					}
				}
				for _, d := range discards {
					if d.Reason == "" || d.Start < 0 || d.Start > d.End || d.End > k {
						t.Fatalf("%s cut at %d: bad discard %+v", f, k, d)
					}
				}
				n++
			}
		}
	}
	t.Logf("%d cuts", n)
}

func hasCall(calls []Call, c Call) bool {
	for _, f := range calls {
		if f.Name == c.Name && string(f.Arguments) == string(c.Arguments) && f.Start == c.Start && f.End == c.End && f.Format == c.Format {
			return true
		}
	}
	return false
}

// A section cut after its first call and before its closing token may have
// lost a sibling: nothing in it is a call, and one Discard says it was cut.
func TestRecover_a_section_cut_after_one_call_yields_none(t *testing.T) {
	for _, test := range []struct{ name, text string }{
		{"kimi", "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\":1}<|tool_call_end|>"},
		{"dsml", "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"a\" string=\"true\">x</｜DSML｜parameter>\n</｜DSML｜invoke>\n"},
		{"seed", "<seed:tool_call>\n<function=f>\n<parameter=a>x</parameter>\n</function>\n"},
		{"olmo3", "<function_calls>\nf(a=1)\n"},
		{"apertus", "<|tools_prefix|>[{\"f\": {\"a\": 1}}, "},
		{"glm", "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n"},
		{"gemma4", "<|tool_call>call:f{a:1}"},
		{"functiongemma", "<start_function_call>call:f{a:<escape>x<escape>}"},
		{"tool_code", "```tool_code\nf(a=1)\n"},
		{"deepseek", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"a\":1}<｜tool▁call▁end｜>"},
		{"dsml_ascii", "<|DSML|function_calls>\n<|DSML|invoke name=\"f\">\n<|DSML|parameter name=\"a\" string=\"true\">x</|DSML|parameter>\n</|DSML|invoke>\n"},
	} {
		t.Run(test.name, func(t *testing.T) {
			calls, discards := Recover(test.text)
			if len(calls) != 0 || len(discards) != 1 || !strings.Contains(discards[0].Reason, "truncated") {
				t.Fatalf("calls %v, discards %+v; want no call and one truncated discard", summary(calls), discards)
			}
		})
	}
}

// Each family's notation is found by one marker search: prose that mentions
// the families' words but none of their tokens yields nothing and no
// Discard.
func TestRecover_batch_a_words_in_prose_are_not_calls(t *testing.T) {
	for _, text := range []string{
		"GLM writes <tool_call> blocks; Kimi uses functions.get_weather:0 ids.",
		"Use print(get_weather(city='Paris')) in ```python\nprint(1)\n```",
		"The DSML markup and <function_calls> are described in the docs.",
		"call:get_weather{location:Paris} is FunctionGemma's grammar.",
		"<tool_call>I will now call the tool</tool_call>",
	} {
		calls, discards := Recover(text)
		for _, d := range discards {
			if d.Format != "hermes" {
				t.Errorf("%q: discard %+v from a batch-A dialect", text, d)
			}
		}
		if len(calls) != 0 {
			t.Errorf("%q: calls %v", text, summary(calls))
		}
	}
}

// BenchmarkRecover_batch_a_scanners_4KiB_no_call is what the batch-A
// dialects add to Recover on prose without a call: one marker search each.
func BenchmarkRecover_batch_a_scanners_4KiB_no_call(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(prose4KiB)))
	r := &recoverer{text: prose4KiB, data: []byte(prose4KiB), budget: 1 << 20}
	for b.Loop() {
		r.kimi()
		r.dsml()
		r.glm()
		r.seedOSS()
		r.apertus()
		r.olmo3()
		r.gemma()
		if len(r.calls)+len(r.discards)+len(r.claimed) != 0 {
			b.Fatal(r.calls, r.discards)
		}
	}
}

// Runs of any batch-A marker, opened and never closed, or closed calls
// without a section, stay bounded: no call from junk and few Discards.
func TestRecover_batch_a_marker_floods_are_bounded(t *testing.T) {
	for _, unit := range []string{
		"<|tool_calls_section_begin|>", "<|tool_call_begin|>", "<|tool_calls_section_begin|><|tool_call_begin|>f:0<|tool_call_argument_begin|>",
		"<|tool_call_begin|>f:0<|tool_call_argument_begin|>{}<|tool_call_end|>",
		"<｜DSML｜function_calls>", "<｜DSML｜function_calls><｜DSML｜invoke name=\"f\">", "<｜DSML｜invoke name=\"f\">",
		"<tool_call>f\n<arg_key>a</arg_key>", "<seed:tool_call>", "<seed:tool_call><function=f>",
		"<|tools_prefix|>[", "<function_calls>\nf(", "<start_function_call>call:f{a:", "<|tool_call>call:f{a:<|\"|>",
		"```tool_code\nf(a=1)\n",
	} {
		text := strings.Repeat(unit, 1<<20/len(unit))
		calls, discards := Recover(text)
		if len(calls) > MaxCalls {
			t.Errorf("%q: %d calls", unit, len(calls))
		}
		if len(discards) > 2*maxMarkers+MaxCalls {
			t.Errorf("%q: %d discards", unit, len(discards))
		}
	}
}

// A call that carries Params carries every top-level argument in it, the
// contract the parse gate's schema re-typing relies on (it rebuilds the
// arguments from Params alone).
func TestRecover_batch_a_params_cover_every_argument(t *testing.T) {
	for _, fam := range batchA() {
		files, _ := filepath.Glob(filepath.Join("testdata", fam, "*.txt"))
		for _, f := range files {
			raw, _ := os.ReadFile(f)
			calls, _ := Recover(string(raw))
			for _, c := range calls {
				if c.Params == nil {
					continue
				}
				args, _, err := TypeArgs(c.Params, nil)
				if err != nil {
					t.Fatalf("%s: %s: %v", f, c.Name, err)
				}
				var got, want map[string]any
				_ = json.Unmarshal(args, &got)
				_ = json.Unmarshal(c.Arguments, &want)
				if len(got) != len(want) {
					t.Fatalf("%s: %s: Params %q do not cover the arguments %s", f, c.Name, c.Params, c.Arguments)
				}
				for k := range want {
					if _, ok := c.Params[k]; !ok {
						t.Fatalf("%s: %s: argument %s has no Params entry", f, c.Name, k)
					}
				}
			}
		}
	}
}

// Other families' tokens that share Kimi's "<|tool_call" prefix (Granite's
// <|tool_call|>, Gemma 4's <|tool_call>) never count against Kimi's marker
// bound nor yield a Kimi Discard.
func TestRecover_kimi_ignores_lookalike_tokens(t *testing.T) {
	for _, unit := range []string{"<|tool_call>call:f{}<tool_call|>", "<|tool_call|>", "<|tool_call_end|>"} {
		_, discards := Recover(strings.Repeat(unit, 2*maxMarkers))
		for _, d := range discards {
			if d.Format == "kimi" {
				t.Fatalf("%q: %+v", unit, d)
			}
		}
	}
}
