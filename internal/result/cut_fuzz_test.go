package result

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCut: whatever the part and the limits, a cut keeps the part when it
// fits, and otherwise is valid JSON naming the size and sha256 of the whole,
// with an excerpt that is the part's beginning; CutText stays within its
// limit (above the note's size) and never splits a rune of valid text.
func FuzzCut(f *testing.F) {
	f.Add([]byte(`{"a":"b"}`), 4, 2)
	f.Add([]byte(strings.Repeat("é", 300)), 100, 33)
	f.Add([]byte("\xff\xfe\x00"), 1, 1)
	f.Fuzz(func(t *testing.T, data []byte, limit, excerpt int) {
		limit, excerpt = limit%(1<<12), excerpt%(1<<12)
		if limit < 0 || excerpt < 0 {
			return
		}
		out := Cut(data, limit, excerpt)
		if len(data) <= limit {
			if string(out) != string(data) {
				t.Fatal("a part within the limit changed")
			}
		} else {
			c, ok := IsCut(out)
			sum := sha256.Sum256(data)
			if !ok || !json.Valid(out) || c.Bytes != int64(len(data)) || c.SHA256 != hex.EncodeToString(sum[:]) {
				t.Fatalf("cut form %s", out)
			}
			// Invalid UTF-8 reads as U+FFFD in a JSON string, so only valid
			// text is compared byte for byte.
			if utf8.Valid(data) && (!strings.HasPrefix(string(data), c.Excerpt) || len(c.Excerpt) > excerpt) {
				t.Fatal("excerpt is not the part's beginning, within its bound")
			}
		}
		s := string(data)
		got := CutText(s, limit)
		if len(s) <= limit && got != s {
			t.Fatal("a text within the limit changed")
		}
		if len(s) > limit && limit >= 120 && len(got) > limit {
			t.Fatalf("CutText is %d bytes over a %d limit", len(got), limit)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatal("CutText split a rune")
		}
	})
}
