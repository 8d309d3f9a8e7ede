// Package wirejson encodes the messages toolgate writes itself — call
// envelopes between gates, status records, results, audit events — with
// encoding/json's (v1) semantics (omitempty, nil slices as null, invalid
// UTF-8 as U+FFFD, unknown names ignored) and without the costs v1 adds that
// these messages never need: names match exactly (every one of them is
// written by toolgate under the same names), nothing is escaped for HTML or
// JavaScript, and a type's MarshalJSON output is not parsed a second time
// when the caller invokes the encoder directly. What encoding/json wrote,
// this reads the same, and the other way round (wirejson_test.go).
package wirejson

import (
	"encoding/json"
	"encoding/json/jsontext"
	jsonv2 "encoding/json/v2"
)

func options() jsonv2.Options {
	return jsonv2.JoinOptions(
		json.DefaultOptionsV1(),
		jsonv2.MatchCaseInsensitiveNames(false),
		json.MatchCaseSensitiveDelimiter(true),
		jsontext.EscapeForHTML(false),
		jsontext.EscapeForJS(false),
	)
}

// Marshal encodes v.
func Marshal(v any) ([]byte, error) { return jsonv2.Marshal(v, options()) }

// Unmarshal decodes data into v.
func Unmarshal(data []byte, v any) error { return jsonv2.Unmarshal(data, v, options()) }
