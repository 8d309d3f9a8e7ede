package call

import (
	"encoding/json"
	"encoding/json/jsontext"
	jsonv2 "encoding/json/v2"
)

// codec is how envelopes are encoded between gates: encoding/json's (v1)
// semantics — omitempty, nil slices as null, invalid UTF-8 as U+FFFD — with
// the costs v1 adds and an envelope never needs left out: names match
// exactly (every envelope is written by this package), and nothing is
// escaped for HTML. Decoding what encoding/json wrote gives the same
// envelope; so does the other way round.
func codec() jsonv2.Options {
	return jsonv2.JoinOptions(
		json.DefaultOptionsV1(),
		jsonv2.MatchCaseInsensitiveNames(false),
		json.MatchCaseSensitiveDelimiter(true),
		jsontext.EscapeForHTML(false),
		jsontext.EscapeForJS(false),
	)
}
