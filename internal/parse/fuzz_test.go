package parse

import (
	"bytes"
	"encoding/json"
	"encoding/json/jsontext"
	"testing"
	"unicode/utf8"
)

func seedCorpus(f *testing.F) {
	for _, doc := range fixtureArguments(f) {
		f.Add(doc)
		f.Add(doc[:len(doc)/2])
	}
	for _, s := range []string{`{a: 'x', b: True, /* c */ "d": [1,],}`, `{"a": "\ud83d\ude00"}`, `{"a":1,"a":2}`, `[[[[`, ``, `{"s": "x\`,
		`{"a": "\ud800"}`, `{"a": "\udc00\ud800"}`, "{\"a\": \"x\xed\xa0\x80\"}", "{\"a\": \"\xff\"}", `{"a": "\ufffd"}`} {
		f.Add([]byte(s))
	}
}

func FuzzStrict(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, v, err := Strict(raw, Limits{MaxBytes: 4096, MaxDepth: 16})
		if err != nil {
			if err.Offset < 0 || err.Offset > len(raw) || err.Line < 1 || err.Column < 1 {
				t.Fatalf("bad position %+v", err)
			}
			if !utf8.ValidString(err.Excerpt) {
				t.Fatalf("excerpt not UTF-8: %q", err.Excerpt)
			}
			if err.Code == CodeTruncated && json.Valid(raw) {
				t.Fatalf("valid JSON %q called truncated", raw)
			}
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("Strict accepted %q, encoding/json refuses it", raw)
		}
		// Bytes are what the model wrote: accepted arguments are UTF-8
		// with no lone surrogate escape and no duplicate key (RFC 7493,
		// as encoding/json/v2 checks), and no U+FFFD appears that the
		// input did not hold itself or as an escape.
		if !jsontext.Value(raw).IsValid() {
			t.Fatalf("Strict accepted %q, which is not exact RFC 7493 JSON", raw)
		}
		if got, had := bytes.Count(c, []byte("\uFFFD")), bytes.Count(raw, []byte("\uFFFD"))+escapedReplacements(raw); got > had {
			t.Fatalf("canonical %q of %q has %d U+FFFD, the input %d", c, raw, got, had)
		}
		again, _, err := Strict(c, Limits{MaxBytes: 1 << 20, MaxDepth: 16})
		if err != nil || !bytes.Equal(again, c) {
			t.Fatalf("canonical %q not a fixed point: %q %v", c, again, err)
		}
		if v == nil {
			t.Fatal("nil value with nil error")
		}
	})
}

// escapedReplacements counts \ufffd escapes, in either case.
func escapedReplacements(raw []byte) int {
	return bytes.Count(bytes.ToLower(raw), []byte(`\ufffd`))
}

func FuzzRepair(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		fixed, changes := Repair(raw, allCosmetic)
		if bytes.Count(fixed, []byte("}"))+bytes.Count(fixed, []byte("]")) > bytes.Count(raw, []byte("}"))+bytes.Count(raw, []byte("]")) {
			t.Fatalf("Repair(%q) = %q added a bracket", raw, fixed)
		}
		last := -1
		for _, ch := range changes {
			if ch.Offset <= last || !bytes.HasPrefix(raw[ch.Offset:], []byte(ch.Before)) {
				t.Fatalf("change %+v out of order or not at its offset in %q", ch, raw)
			}
			last = ch.Offset
		}
		if len(changes) == 0 && !bytes.Equal(fixed, raw) {
			t.Fatalf("bytes changed without a reported change: %q -> %q", raw, fixed)
		}
		if json.Valid(raw) && (len(changes) != 0 || !bytes.Equal(fixed, raw)) {
			t.Fatalf("valid JSON %q was changed: %q %v", raw, fixed, changes)
		}
	})
}
