package result

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// CutKey marks the cut form of a part too large to store: a JSON object
// {"truncated_by_toolgate": true, "bytes": N, "sha256": "...", "limit": L,
// "excerpt": "...", "note": "..."} in place of the part itself.
const CutKey = "truncated_by_toolgate"

// ExcerptMax bounds the excerpt of a cut part.
const ExcerptMax = 16 << 10

// Cutout is the cut form of a JSON part (a tool result, parsed arguments).
type Cutout struct {
	Truncated bool   `json:"truncated_by_toolgate"`
	Bytes     int64  `json:"bytes"`  // the size of the whole part
	SHA256    string `json:"sha256"` // hex sha256 of the whole part
	Limit     int    `json:"limit"`  // the most bytes of this part toolgate stores
	Excerpt   string `json:"excerpt"`
	Note      string `json:"note"`
}

// Limit is the largest tool result toolgate stores whole, for a connection
// whose max payload is maxPayload: a quarter of it, so the result message,
// the envelope and the idempotency record that carry it fit with the rest.
func Limit(maxPayload int64) int { return int(max(maxPayload, 4<<10) / 4) }

// Cut returns data when it is at most limit bytes, else its cut form with an
// excerpt of at most excerpt bytes (its beginning, on a rune boundary).
func Cut(data []byte, limit, excerpt int) json.RawMessage {
	if len(data) <= limit {
		return data
	}
	sum := sha256.Sum256(data)
	return CutSum(data, int64(len(data)), hex.EncodeToString(sum[:]), limit, excerpt)
}

// CutSum is Cut for a part read as a stream: head is its beginning, total
// and sum (hex sha256) describe the whole.
func CutSum(head []byte, total int64, sum string, limit, excerpt int) json.RawMessage {
	ex := runeCut(head, excerpt)
	if int64(len(ex)) < total {
		ex = dropPartialRune(ex) // head itself may end inside a rune
	}
	c := Cutout{
		Truncated: true, Bytes: total, SHA256: sum, Limit: limit, Excerpt: string(ex),
		Note: fmt.Sprintf("cut by toolgate: this part is %d bytes, over the %d-byte limit of what toolgate stores; excerpt holds its first %d bytes, sha256 identifies the whole", total, limit, len(ex)),
	}
	out, _ := marshal(c) // a struct of strings and numbers always encodes
	return out
}

// IsCut reports whether data is a cut form, and decodes it.
func IsCut(data []byte) (Cutout, bool) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' || !bytes.Contains(data, []byte(CutKey)) {
		return Cutout{}, false
	}
	var c Cutout
	if json.Unmarshal(data, &c) != nil || !c.Truncated {
		return Cutout{}, false
	}
	return c, true
}

// CutText returns s when it is at most limit bytes, else its beginning and a
// note "… [cut by toolgate: N bytes, sha256 X]", at most limit bytes in all
// (limit below the note's size yields the note alone).
func CutText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	note := fmt.Sprintf("… [cut by toolgate: %d bytes, sha256 %s]", len(s), hex.EncodeToString(sum[:]))
	keep := max(limit-len(note), 0)
	return string(runeCut([]byte(s), keep)) + note
}

// dropPartialRune drops an incomplete rune at the end of b.
func dropPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// runeCut returns at most n bytes of b's beginning, never splitting a rune.
func runeCut(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return b[:n]
}

// marshal encodes without HTML escaping, so an excerpt keeps "<", ">" and
// "&" as the executor wrote them.
func marshal(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("result: encode: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
