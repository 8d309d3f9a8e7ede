package provider

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"strconv"

	"github.com/toolgate/toolgate/internal/canon"
)

// ErrDuplicateKey is wrapped by the error for a body or event that names
// one key twice in an object. encoding/json v1 kept the last one, and folded
// case ("NAME" filled name): a body that reads differently to two decoders
// is refused, never judged by a guess.
var ErrDuplicateKey = errors.New("duplicate key")

// wireOptions decodes provider JSON with encoding/json/v2: member names match
// exactly as each provider documents them, duplicate names are refused, and
// unknown members are ignored. Invalid UTF-8 does not refuse the whole body:
// a call's arguments are kept as raw text (jsontext.Value) and judged per
// call by the parse gate, which refuses them with the offset; text fields
// are read by wireString, which keeps their bytes.
func wireOptions() json.Options { return jsontext.AllowInvalidUTF8(true) }

// unmarshal decodes one provider JSON value into v.
func unmarshal(provider string, data []byte, v any) error {
	if err := json.Unmarshal(data, v, wireOptions()); err != nil {
		return wireError(provider, err)
	}
	return nil
}

// wireError names what was wrong and where: a duplicate key with its byte
// offset and JSON pointer, otherwise the decoder's own words.
func wireError(provider string, err error) error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) && errors.Is(se.Err, jsontext.ErrDuplicateName) {
		return fmt.Errorf("provider: %s: %w %s at byte %d (in object %q): a provider body names each key once; the body is refused rather than read by a guess",
			provider, ErrDuplicateKey, strconv.Quote(se.JSONPointer.LastToken()), se.ByteOffset, pointerOrRoot(se.JSONPointer.Parent()))
	}
	return fmt.Errorf("provider: %s: %w", provider, err)
}

// wireString is a JSON string decoded byte for byte: invalid UTF-8 is kept
// as it is and a lone surrogate escape as its WTF-8 bytes (appendJSONString),
// where encoding/json writes U+FFFD. Text a model wrote reaches text recovery
// and free-text tools exactly; a strict reader refuses it there.
type wireString string

// UnmarshalJSONFrom implements json.UnmarshalerFrom. null leaves the value.
func (s *wireString) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	switch v.Kind() {
	case 'n':
		return nil
	case '"':
		b, err := appendJSONString(nil, v)
		if err != nil {
			return err
		}
		*s = wireString(b)
		return nil
	}
	return fmt.Errorf("provider: expected a JSON string, got %s", v.Kind())
}

func pointerOrRoot(p jsontext.Pointer) string {
	if p == "" {
		return "/"
	}
	return string(p)
}

// objectArgs is the canonical JSON of arguments sent as an object. An object
// whose text is not UTF-8 (raw invalid bytes, a lone \uD800 escape) has no
// canonical form: its bytes are kept exactly as the body held them, for the
// parse gate to refuse with the offset — that call alone, its siblings go on.
func objectArgs(raw jsontext.Value) ([]byte, error) {
	obj, err := canon.JSON(raw)
	if errors.Is(err, canon.ErrInvalidUTF8) {
		return append([]byte(nil), raw...), nil
	}
	return obj, err
}
