package textcall

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/parse"
)

func seedTexts(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(textFormats, "*.txt"))
	if len(files) == 0 {
		f.Fatal("no text fixtures")
	}
	for _, file := range files {
		text := readText(f, filepath.Base(file))
		f.Add(text)
		f.Add(text[:len(text)/2])
	}
	family, _ := filepath.Glob(filepath.Join("testdata", "*", "*.txt"))
	for _, file := range family {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(raw))
		f.Add(string(raw[:len(raw)/2]))
	}
	f.Add(`<|python_tag|>[f(a=(1, [2, {'k': None}]))]<|eom_id|>`)
	f.Add("```tool_call\n{\"tool\": \"f\", \"args\": \"{}\"}\n```")
	f.Add(`<tool_call>{"name": "f", "arguments": {"city": "x\ud800"}}</tool_call>`)
	f.Add("<function=f><parameter=a>\xff</parameter></function>")
}

func FuzzRecover(f *testing.F) {
	seedTexts(f)
	f.Add(`get_weather(location="SF")` + "\n" + `get_time(tz='UTC')`)
	f.Add("call:bash{command:<|\"|>ls}")
	f.Fuzz(func(t *testing.T, text string) {
		calls, discards := Recover(text)
		// With every name a known tool, bare pythonic calls are read too.
		known, knownDiscards := RecoverWith(text, Options{Known: func(string) bool { return true }})
		calls, discards = append(calls, known...), append(discards, knownDiscards...)
		for _, c := range calls {
			if c.Name == "" || c.Start < 0 || c.End > len(text) || c.Start >= c.End {
				t.Fatalf("bad call %+v in %q", c, text)
			}
			canonical, _, err := parse.Strict(c.Arguments, parse.DefaultLimits())
			if err != nil || !bytes.Equal(canonical, c.Arguments) {
				t.Fatalf("arguments %q are not a canonical object: %v", c.Arguments, err)
			}
			// Bytes are what the model wrote: no U+FFFD the text did
			// not hold itself or as an escape.
			had := strings.Count(text, "\uFFFD") + strings.Count(strings.ToLower(text), "ufffd")
			if n := bytes.Count(c.Arguments, []byte("\uFFFD")); n > had {
				t.Fatalf("arguments %q have %d U+FFFD, the text %q %d", c.Arguments, n, text, had)
			}
		}
		for _, d := range discards {
			if d.Reason == "" || d.Start < 0 || d.Start > d.End || d.End > len(text) {
				t.Fatalf("bad discard %+v", d)
			}
		}
	})
}

func FuzzUnpack(f *testing.F) {
	for _, s := range []string{
		`{"name": "f", "arguments": {"a": 1}}`, `{"function": {"name": "f", "arguments": "{\"a\": 1}"}}`,
		`{"tool": "f", "args": "\"x\""}`, `[{"name": "f"}]`, `{"name": "f", "params": null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, _, err := parse.Value(raw, parse.DefaultLimits())
		if err != nil {
			return
		}
		name, args, reason := unpack(v)
		if reason != "" {
			return
		}
		if name == "" || args == nil {
			t.Fatalf("ok with name %q args %v", name, args)
		}
	})
}
