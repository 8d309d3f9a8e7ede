package console

import (
	"encoding/json"

	"github.com/toolgate/toolgate/internal/call"
)

// evidenceJSON is a dead letter's envelope (already redacted) indented,
// with the JSON it holds as strings — raw_arguments and each repair's
// raw_arguments and answer — shown decoded: escaped inside a string they
// are unreadable. A string that is not JSON stays a string.
func evidenceJSON(e call.Envelope) string {
	b, err := json.Marshal(e)
	if err != nil {
		return prettyJSON(e)
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return prettyJSON(e)
	}
	decodeField(m, "raw_arguments")
	if reps, ok := m["repairs"].([]any); ok {
		for _, r := range reps {
			if rm, ok := r.(map[string]any); ok {
				decodeField(rm, "raw_arguments")
				decodeField(rm, "answer")
			}
		}
	}
	return prettyJSON(m)
}

// decodeField replaces m[k], a string holding a JSON object or array, by
// that JSON.
func decodeField(m map[string]any, k string) {
	s, ok := m[k].(string)
	if !ok || s == "" || (s[0] != '{' && s[0] != '[') || !json.Valid([]byte(s)) {
		return
	}
	m[k] = json.RawMessage(s)
}
