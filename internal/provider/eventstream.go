package provider

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
)

// AWS event-stream framing (application/vnd.amazon.eventstream), the body of
// a Bedrock ConverseStream HTTP response. Each message is
//
//	total length (uint32) | headers length (uint32) | prelude CRC32 (of the 8 bytes before)
//	headers: name length (uint8) | name | value type (uint8) | value ...
//	payload (total - headers - 16 bytes)
//	message CRC32 (of everything before it)
//
// big-endian, CRC32 IEEE. The input is hostile: every length is checked
// against what is left before it is used, and both CRCs must match.

// Limits of the event-stream framing, as the AWS SDKs enforce them.
const (
	esPrelude    = 12
	esMinMessage = 16
	esMaxMessage = 16 << 20  // 16 MiB
	esMaxHeaders = 128 << 10 // 128 KiB
)

// ErrEventStream is wrapped by every event-stream decoding error.
var ErrEventStream = errors.New("provider: eventstream")

// isEventStream reports whether data begins with a well-formed event-stream
// prelude: plausible lengths and a matching prelude CRC. Text (SSE, NDJSON,
// JSON) passes the CRC by chance once in 2^32.
func isEventStream(data []byte) bool {
	if len(data) < esMinMessage {
		return false
	}
	total := binary.BigEndian.Uint32(data[0:4])
	headers := binary.BigEndian.Uint32(data[4:8])
	return total >= esMinMessage && total <= esMaxMessage && headers <= total-esMinMessage &&
		crc32.ChecksumIEEE(data[:8]) == binary.BigEndian.Uint32(data[8:12])
}

// esMessage is one decoded event-stream message.
type esMessage struct {
	headers map[string]string // string-valued headers; others are skipped
	payload []byte
}

// decodeEventStream splits data into messages. Any damage (a bad CRC, a
// bad length, a malformed header) fails the whole transcript: a recording
// that reads differently than it was sent is not published. A body that
// ends inside a message (the connection was cut) returns the complete
// messages before it and an error wrapping ErrCutTranscript.
func decodeEventStream(data []byte) ([]esMessage, error) {
	var out []esMessage
	for off := 0; off < len(data); {
		m, n, err := decodeESMessage(data[off:])
		if errors.Is(err, ErrCutTranscript) && len(out) > 0 {
			return out, fmt.Errorf("%w: %d complete messages, then message %d at byte %d: %w", ErrEventStream, len(out), len(out)+1, off, err)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: message %d at byte %d: %w", ErrEventStream, len(out)+1, off, err)
		}
		out = append(out, m)
		off += n
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no messages", ErrEventStream)
	}
	return out, nil
}

func decodeESMessage(b []byte) (esMessage, int, error) {
	if len(b) < esMinMessage {
		return esMessage{}, 0, fmt.Errorf("%w: %d bytes left, a message takes at least %d", ErrCutTranscript, len(b), esMinMessage)
	}
	total := binary.BigEndian.Uint32(b[0:4])
	hlen := binary.BigEndian.Uint32(b[4:8])
	if got, want := crc32.ChecksumIEEE(b[:8]), binary.BigEndian.Uint32(b[8:12]); got != want {
		return esMessage{}, 0, fmt.Errorf("prelude CRC %08x, the message says %08x", got, want)
	}
	switch {
	case total < esMinMessage || total > esMaxMessage:
		return esMessage{}, 0, fmt.Errorf("total length %d outside %d..%d", total, esMinMessage, esMaxMessage)
	case hlen > esMaxHeaders || hlen > total-esMinMessage:
		return esMessage{}, 0, fmt.Errorf("headers length %d does not fit a %d-byte message (limit %d)", hlen, total, esMaxHeaders)
	case uint64(total) > uint64(len(b)):
		return esMessage{}, 0, fmt.Errorf("%w: total length %d, only %d bytes left", ErrCutTranscript, total, len(b))
	}
	msg := b[:total]
	if got, want := crc32.ChecksumIEEE(msg[:total-4]), binary.BigEndian.Uint32(msg[total-4:]); got != want {
		return esMessage{}, 0, fmt.Errorf("message CRC %08x, the message says %08x", got, want)
	}
	headers, err := decodeESHeaders(msg[esPrelude : esPrelude+hlen])
	if err != nil {
		return esMessage{}, 0, err
	}
	return esMessage{headers: headers, payload: msg[esPrelude+hlen : total-4]}, int(total), nil
}

// esValueSize is the fixed size of a header value type, or -1 for the
// length-prefixed ones (6 bytes, 7 string) and -2 for an unknown type.
func esValueSize(t byte) int {
	switch t {
	case 0, 1: // bool true, false
		return 0
	case 2: // byte
		return 1
	case 3: // short
		return 2
	case 4: // int
		return 4
	case 5, 8: // long, timestamp
		return 8
	case 9: // uuid
		return 16
	case 6, 7:
		return -1
	}
	return -2
}

func decodeESHeaders(b []byte) (map[string]string, error) {
	h := map[string]string{}
	for len(b) > 0 {
		nlen := int(b[0])
		if nlen == 0 || 1+nlen+1 > len(b) {
			return nil, fmt.Errorf("header name of %d bytes does not fit", nlen)
		}
		name := string(b[1 : 1+nlen])
		t := b[1+nlen]
		b = b[2+nlen:]
		size := esValueSize(t)
		switch {
		case size == -2:
			return nil, fmt.Errorf("header %q has unknown value type %d", name, t)
		case size == -1:
			if len(b) < 2 {
				return nil, fmt.Errorf("header %q value length does not fit", name)
			}
			vlen := int(binary.BigEndian.Uint16(b))
			if 2+vlen > len(b) {
				return nil, fmt.Errorf("header %q value of %d bytes does not fit", name, vlen)
			}
			if t == 7 {
				if _, dup := h[name]; dup {
					return nil, fmt.Errorf("header %q appears twice", name)
				}
				h[name] = string(b[2 : 2+vlen])
			}
			b = b[2+vlen:]
		default:
			if size > len(b) {
				return nil, fmt.Errorf("header %q value does not fit", name)
			}
			b = b[size:]
		}
	}
	return h, nil
}

// eventStreamEvents turns decoded messages into the JSON events the
// bedrock-converse codec reads, one per message, each wrapped with its type
// as the key — the form the AWS SDKs' JSON and vercel/ai recordings use:
//
//	event     {"<:event-type>": payload}          e.g. {"contentBlockDelta":{...}}
//	exception {"<:exception-type>": payload}      e.g. {"throttlingException":{"message":...}}
//	error     {"error":{"code":<:error-code>,"message":<:error-message>}}
func eventStreamEvents(msgs []esMessage) ([][]byte, error) {
	out := make([][]byte, 0, len(msgs))
	for i, m := range msgs {
		var key string
		switch mt := m.headers[":message-type"]; mt {
		case "event":
			key = m.headers[":event-type"]
		case "exception":
			key = m.headers[":exception-type"]
		case "error":
			ev, err := json.Marshal(map[string]map[string]string{"error": {"code": m.headers[":error-code"], "message": m.headers[":error-message"]}})
			if err != nil {
				return nil, fmt.Errorf("%w: message %d: %v", ErrEventStream, i+1, err)
			}
			out = append(out, ev)
			continue
		default:
			return nil, fmt.Errorf("%w: message %d: :message-type %q is not event, exception or error", ErrEventStream, i+1, mt)
		}
		if key == "" {
			return nil, fmt.Errorf("%w: message %d: %s message without its type header", ErrEventStream, i+1, m.headers[":message-type"])
		}
		payload := trimSpace(m.payload)
		if len(payload) == 0 {
			payload = []byte("{}")
		}
		if payload[0] != '{' {
			return nil, fmt.Errorf("%w: message %d (%s): payload is not a JSON object", ErrEventStream, i+1, key)
		}
		name, err := json.Marshal(key)
		if err != nil {
			return nil, fmt.Errorf("%w: message %d: %v", ErrEventStream, i+1, err)
		}
		ev := make([]byte, 0, len(name)+len(payload)+3)
		ev = append(append(append(append(ev, '{'), name...), ':'), payload...)
		out = append(out, append(ev, '}'))
	}
	return out, nil
}

// splitEventStream is SplitTranscript for event-stream framing.
func splitEventStream(data []byte) ([][]byte, error) {
	msgs, err := decodeEventStream(data)
	if err != nil && !errors.Is(err, ErrCutTranscript) {
		return nil, err
	}
	events, eerr := eventStreamEvents(msgs)
	if eerr != nil {
		return nil, eerr
	}
	return events, err
}
