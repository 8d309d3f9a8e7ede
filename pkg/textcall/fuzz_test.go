package textcall

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/pkg/parse"
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
	f.Add(`<|python_tag|>[f(a=(1, [2, {'k': None}]))]<|eom_id|>`)
	f.Add("```tool_call\n{\"tool\": \"f\", \"args\": \"{}\"}\n```")
}

func FuzzRecover(f *testing.F) {
	seedTexts(f)
	f.Fuzz(func(t *testing.T, text string) {
		calls, discards := Recover(text)
		for _, c := range calls {
			if c.Name == "" || c.Start < 0 || c.End > len(text) || c.Start >= c.End {
				t.Fatalf("bad call %+v in %q", c, text)
			}
			canonical, _, err := parse.Strict(c.Arguments, parse.DefaultLimits())
			if err != nil || !bytes.Equal(canonical, c.Arguments) {
				t.Fatalf("arguments %q are not a canonical object: %v", c.Arguments, err)
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
		name, args, ok := Unpack(v)
		if !ok {
			return
		}
		if name == "" || args == nil {
			t.Fatalf("ok with name %q args %v", name, args)
		}
	})
}
