package provider

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrEmptyTranscript is returned by SplitTranscript for input with no events.
var ErrEmptyTranscript = errors.New("provider: transcript has no events (expected SSE data: lines or one JSON object per line)")

// IsTranscript reports whether data is a recorded stream rather than one
// whole response body: SSE (a first line starting with "data:", "event:",
// "id:", "retry:" or ":"), or more than one JSON value (NDJSON, .chunks.jsonl).
// A single JSON value, however it is indented, is a whole body; so is a
// one-event NDJSON file, which reads the same either way. A JSON array is
// a stream: Gemini's streamGenerateContent without alt=sse. AWS event-stream
// framing (a Bedrock ConverseStream body) is a transcript too.
func IsTranscript(data []byte) bool {
	if isJSONArray(data) { // Gemini streamGenerateContent without alt=sse
		return true
	}
	if isSSE(data) || isEventStream(data) {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var v json.RawMessage
	if dec.Decode(&v) != nil {
		return false
	}
	return dec.More()
}

func isSSE(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	for _, p := range [][]byte{[]byte("data:"), []byte("event:"), []byte("id:"), []byte("retry:"), []byte(":")} {
		if bytes.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// SplitTranscript splits a recorded stream into event payloads in order.
// SSE: the data: lines of each blank-line-separated event joined by "\n",
// with CRLF or LF line ends and trailing padding removed; event:, id: and
// comment lines dropped; "[DONE]" kept as an event. NDJSON / .chunks.jsonl:
// one trimmed non-empty line per event. A JSON array (Gemini without
// alt=sse): one event per element, however the elements are laid out; an
// array cut short returns its complete elements and an error wrapping
// ErrCutTranscript. AWS event-stream framing: each
// message's JSON payload wrapped with its event type (eventstream.go); a
// damaged frame fails the whole transcript, a body cut inside a frame
// returns the complete ones and an error wrapping ErrCutTranscript. The
// payloads are copies.
func SplitTranscript(data []byte) ([][]byte, error) {
	if isJSONArray(data) {
		return splitJSONArray(data)
	}
	var out [][]byte
	if isEventStream(data) {
		return splitEventStream(data)
	}
	if isSSE(data) {
		out = splitSSE(data)
	} else {
		for _, line := range bytes.Split(data, []byte("\n")) {
			if line = bytes.TrimSpace(line); len(line) > 0 {
				out = append(out, bytes.Clone(line))
			}
		}
	}
	if len(out) == 0 {
		return nil, ErrEmptyTranscript
	}
	return out, nil
}

func splitSSE(data []byte) [][]byte {
	var out [][]byte
	var cur []byte
	have := false
	flush := func() {
		if have {
			out = append(out, bytes.TrimSpace(cur))
		}
		cur, have = nil, false
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimRight(line, " \t\r")
		if len(line) == 0 {
			flush()
			continue
		}
		if !bytes.HasPrefix(line, []byte("data:")) {
			continue // event:, id:, retry:, comments
		}
		v := bytes.TrimPrefix(line[len("data:"):], []byte(" "))
		if have {
			cur = append(cur, '\n')
		}
		cur, have = append(cur, v...), true
	}
	flush()
	return out
}
