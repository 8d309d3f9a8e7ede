package httpingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// malformed says where body stops being well-formed JSON, as the decoder
// found it: its error with the line, column and byte offset; "" when body
// is well-formed.
func malformed(body []byte) string {
	if json.Valid(body) {
		return ""
	}
	err := json.Unmarshal(body, new(json.RawMessage))
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return "not well-formed JSON"
	}
	off := min(max(se.Offset, 1), int64(len(body)))
	before := body[:off-1] // the byte at fault is body[off-1]
	line := 1 + bytes.Count(before, []byte("\n"))
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("not well-formed JSON: %s at line %d, column %d (byte offset %d)", se.Error(), line, col, off)
}
