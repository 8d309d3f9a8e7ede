package repair

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzPrompt checks that any raw arguments give a prompt without panicking,
// that valid UTF-8 stays valid after the cut and the excerpt, and that the
// raw text is never repeated beyond the cut.
func FuzzPrompt(f *testing.F) {
	for _, s := range []string{"", "{", `{"a":1,}`, "{\"a\":\n\"é", strings.Repeat("[", 3000), `{"a":"` + strings.Repeat("ü", 2100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, fl := range []Failure{InvalidJSON, Truncated, SchemaInvalid} {
			req := Prompt(Input{Failure: fl, Tool: "t", RawArguments: raw, Errors: []string{"e"}})
			if utf8.ValidString(raw) && !utf8.ValidString(req.User) {
				t.Fatalf("%s: prompt is not valid UTF-8 for valid input %q", fl, raw)
			}
			if utf8.RuneCountInString(raw) > MaxRawArguments && strings.Contains(req.User, raw) {
				t.Fatalf("%s: raw arguments longer than the cut were repeated whole", fl)
			}
		}
	})
}
