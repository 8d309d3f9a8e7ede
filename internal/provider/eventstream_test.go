package provider

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// esEncode frames one event-stream message with string headers, in order
// (name, value, name, value, ...), as the AWS SDKs write it.
func esEncode(payload []byte, headers ...string) []byte {
	var h []byte
	for i := 0; i+1 < len(headers); i += 2 {
		h = append(h, byte(len(headers[i])))
		h = append(h, headers[i]...)
		h = append(h, 7)
		h = binary.BigEndian.AppendUint16(h, uint16(len(headers[i+1])))
		h = append(h, headers[i+1]...)
	}
	total := uint32(esMinMessage + len(h) + len(payload))
	b := binary.BigEndian.AppendUint32(nil, total)
	b = binary.BigEndian.AppendUint32(b, uint32(len(h)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	b = append(append(b, h...), payload...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// esEvent frames a ConverseStream event as Bedrock sends it: the payload is
// the event's body, its type in :event-type.
func esEvent(eventType, payload string) []byte {
	return esEncode([]byte(payload), ":event-type", eventType, ":content-type", "application/json", ":message-type", "event")
}

// The real frame vercel/ai recorded from Bedrock (a modelStreamErrorException)
// decodes with both CRCs matching, into the wrapped JSON event, and ends
// the stream with that error.
func TestEventStream_recorded_aws_frame_decodes_to_the_wrapped_event(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(projectFixtures, BedrockConverse, "vercel-model-stream-error-exception.eventstream"))
	if err != nil {
		t.Fatal(err)
	}
	if !IsTranscript(data) {
		t.Fatal("an event-stream body is not taken for a transcript")
	}
	events, err := SplitTranscript(data)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"modelStreamErrorException":{"message":"Model Stream Error","originalStatusCode":500,"originalMessage":"The model stream failed."}}`
	if len(events) != 1 || string(events[0]) != want {
		t.Fatalf("events %q, want [%s]", events, want)
	}
	a := feed(t, BedrockConverse, string(events[0]))
	if r := a.Response(); !a.Done() || r.Error == nil || r.Error.Type != "modelStreamErrorException" || r.Finish != ReasonError {
		t.Fatalf("response %+v, want done with the exception", r)
	}
}

// The binary fixture is the framing of its .chunks.jsonl twin, with
// Bedrock's "p" padding member in each payload; -update writes it.
func TestEventStream_fixture_frames_its_jsonl_twin(t *testing.T) {
	dir := filepath.Join(projectFixtures, BedrockConverse)
	jsonl, err := os.ReadFile(filepath.Join(dir, "aws-converse-stream-tool-use.chunks.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var framed []byte
	for i, line := range bytes.Split(bytes.TrimSpace(jsonl), []byte("\n")) {
		var ev map[string]json.RawMessage
		if err := json.Unmarshal(line, &ev); err != nil || len(ev) != 1 {
			t.Fatalf("line %d: %v", i+1, err)
		}
		for typ, body := range ev {
			padded := strings.TrimSuffix(string(body), "}") + `,"p":"` + strings.Repeat("abcdefghij", i%4+1)[:i%7+3] + `"}`
			if string(body) == "{}" {
				padded = `{"p":"abc"}`
			}
			framed = append(framed, esEvent(typ, padded)...)
		}
	}
	path := filepath.Join(dir, "aws-converse-stream-tool-use.eventstream")
	if *update {
		if err := os.WriteFile(path, framed, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, framed) {
		t.Fatalf("%s is not the framing of its jsonl twin (run -update): %v", path, err)
	}
	a, b := fixtureResponses(t, BedrockConverse, "aws-converse-stream-tool-use.eventstream"), fixtureResponses(t, BedrockConverse, "aws-converse-stream-tool-use.chunks.jsonl")
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("framed and JSON transcripts differ:\n%s\n%s", ja, jb)
	}
}

// Every damaged frame is refused as a whole: each single flipped byte fails
// a CRC or a length check. Each cut is an error too — ErrCutTranscript with
// the complete messages before it once there is one — never fewer events
// read as if they were all.
func TestEventStream_any_flipped_byte_or_cut_is_refused(t *testing.T) {
	first := esEvent("messageStop", `{"stopReason":"tool_use"}`)
	data := append(bytes.Clone(first), esEvent("metadata", `{"usage":{"outputTokens":3}}`)...)
	if _, err := SplitTranscript(data); err != nil {
		t.Fatal(err)
	}
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 0x20
		if evs, err := splitEventStream(bad); err == nil {
			t.Fatalf("byte %d flipped: decoded %q", i, evs)
		}
	}
	for n := 1; n < len(data); n++ {
		if n == len(first) {
			continue // the first message alone is whole
		}
		evs, err := splitEventStream(data[:n])
		if err == nil {
			t.Fatalf("cut at %d of %d: decoded %q", n, len(data), evs)
		}
		if !errors.Is(err, ErrEventStream) || !errors.Is(err, ErrCutTranscript) {
			t.Fatalf("cut at %d: %v is not ErrEventStream and ErrCutTranscript", n, err)
		}
		complete := 0
		if n > len(first) {
			complete = 1
		}
		if len(evs) != complete {
			t.Fatalf("cut at %d: %d complete events returned, want %d", n, len(evs), complete)
		}
	}
}

// Lengths are checked before they are used: a prelude claiming 16 MiB, or
// headers longer than the message, is refused without reading past the end.
func TestEventStream_hostile_lengths_are_refused(t *testing.T) {
	prelude := func(total, headers uint32) []byte {
		b := binary.BigEndian.AppendUint32(nil, total)
		b = binary.BigEndian.AppendUint32(b, headers)
		b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
		return append(b, 0, 0, 0, 0)
	}
	for name, data := range map[string][]byte{
		"total past the end":        prelude(esMaxMessage, 0),
		"total over the limit":      prelude(esMaxMessage+1, 0),
		"total under the minimum":   prelude(15, 0),
		"headers over the total":    prelude(16, 1),
		"headers over the limit":    prelude(esMaxHeaders+esMinMessage+1, esMaxHeaders+1),
		"header name past the end":  esEncodeRawHeaders([]byte{9, 'x'}),
		"header value past the end": esEncodeRawHeaders([]byte{1, 'x', 7, 0, 9, 'y'}),
		"unknown header type":       esEncodeRawHeaders([]byte{1, 'x', 10}),
		"not an event":              esEncode([]byte(`{}`), ":message-type", "ping"),
		"payload not an object":     esEncode([]byte(`[1]`), ":message-type", "event", ":event-type", "messageStop"),
		"event without its type":    esEncode([]byte(`{}`), ":message-type", "event"),
		"header twice":              esEncode([]byte(`{}`), ":message-type", "event", ":message-type", "event"),
	} {
		if evs, err := splitEventStream(data); err == nil || !errors.Is(err, ErrEventStream) {
			t.Errorf("%s: decoded %q, %v", name, evs, err)
		}
	}
}

// esEncodeRawHeaders frames a message whose headers section is h as given.
func esEncodeRawHeaders(h []byte) []byte {
	total := uint32(esMinMessage + len(h))
	b := binary.BigEndian.AppendUint32(nil, total)
	b = binary.BigEndian.AppendUint32(b, uint32(len(h)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	b = append(b, h...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// The framing's error message and non-string headers (an int, a
// timestamp) decode; the error ends the stream.
func TestEventStream_error_message_and_other_header_types(t *testing.T) {
	h := []byte{}
	h = append(h, 4, 'n', '-', 'i', 'd', 4, 0, 0, 0, 7)
	h = append(h, 2, 't', 's', 8, 0, 0, 0, 0, 0, 0, 0, 1)
	h = append(h, 5, 'f', 'l', 'a', 'g', 's', 0)
	for _, kv := range [][2]string{{":message-type", "error"}, {":error-code", "InternalFailure"}, {":error-message", "try again"}} {
		h = append(h, byte(len(kv[0])))
		h = append(h, kv[0]...)
		h = append(h, 7)
		h = binary.BigEndian.AppendUint16(h, uint16(len(kv[1])))
		h = append(h, kv[1]...)
	}
	evs, err := SplitTranscript(esEncodeRawHeaders(h))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"error":{"code":"InternalFailure","message":"try again"}}`; len(evs) != 1 || string(evs[0]) != want {
		t.Fatalf("events %q, want [%s]", evs, want)
	}
	if r := feed(t, BedrockConverse, string(evs[0])).Response(); !r.Complete || r.Error == nil || r.Error.Code != "InternalFailure" {
		t.Fatalf("response %+v", r)
	}
}

// FuzzEventStream_never_panics: any bytes decode or fail, never panic; what
// decodes is one JSON-object-shaped event per message.
func FuzzEventStream_never_panics(f *testing.F) {
	f.Add(esEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"a\""}}}`))
	f.Add(append(esEvent("messageStop", `{"stopReason":"tool_use"}`), esEvent("metadata", `{}`)...))
	f.Add(esEncodeRawHeaders([]byte{1, 'x', 6, 0, 2, 1, 2}))
	if data, err := os.ReadFile(filepath.Join(projectFixtures, BedrockConverse, "vercel-model-stream-error-exception.eventstream")); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := splitEventStream(data)
		if err != nil {
			if !errors.Is(err, ErrEventStream) {
				t.Fatalf("error %v is not ErrEventStream", err)
			}
			if !errors.Is(err, ErrCutTranscript) && evs != nil {
				t.Fatalf("a damaged body returned events: %v", err)
			}
		}
		for _, ev := range evs {
			if len(ev) < 2 || ev[0] != '{' || ev[len(ev)-1] != '}' {
				t.Fatalf("event %q", ev)
			}
			a, _ := NewAccumulator(BedrockConverse)
			_ = a.Add(ev)
		}
		_, _ = SplitTranscript(data)
	})
}

// BenchmarkEventStream_split_200_messages: decoding a 200-message
// ConverseStream body (the bench stream, framed) into its JSON events.
func BenchmarkEventStream_split_200_messages(b *testing.B) {
	var body []byte
	for _, ev := range benchStreams()[BedrockConverse] {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(ev), &m); err != nil {
			b.Fatal(err)
		}
		for typ, payload := range m {
			body = append(body, esEvent(typ, string(payload))...)
		}
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if evs, err := SplitTranscript(body); err != nil || len(evs) != benchEvents {
			b.Fatal(len(evs), err)
		}
	}
}
