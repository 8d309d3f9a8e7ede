package call

import (
	"encoding/json"
	"reflect"
	"testing"
)

// envelopeV1 encodes e the way envelopes were written before the codec:
// encoding/json over the same wire struct.
func envelopeV1(t *testing.T, e Envelope) []byte {
	t.Helper()
	f := envelopeFields(e)
	b, err := json.Marshal(envelopeJSON{&f, exactB64(e.RawArguments), exactB64(e.Text)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Envelopes stored before (dead letters an operator replays, records in
// flight during an upgrade) decode to the same envelope, and what the codec
// writes decodes with encoding/json to the same envelope too: the codec
// changes the cost, not the contract.
func TestCodec_reads_what_encoding_json_wrote_and_writes_what_it_reads(t *testing.T) {
	e := benchEnvelope()
	e.Errors = []string{"bad <b>&</b> value", "\xff not utf-8"}
	e.Text = "<script>&amp;</script> \u2028"
	e.Review = nil
	e.Replays = 0
	e.Repairs = []Repair{{Attempt: 1, Failure: InvalidJSON, RawArguments: "{\"a\":\xfe", Errors: []string{"x"}}}

	var fromV1 Envelope
	if err := fromV1.decode(envelopeV1(t, e)); err != nil {
		t.Fatal(err)
	}
	mine, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var byV1 Envelope
	if err := json.Unmarshal(mine, &byV1); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromV1, byV1) {
		t.Fatalf("the codec and encoding/json disagree:\ncodec read v1: %+v\nv1 read codec: %+v", fromV1, byV1)
	}
	if fromV1.Repairs[0].RawArguments != e.Repairs[0].RawArguments || fromV1.Text != e.Text {
		t.Fatalf("exact bytes lost: %q %q", fromV1.Repairs[0].RawArguments, fromV1.Text)
	}
	if fromV1.Errors[1] != "\ufffd not utf-8" {
		t.Fatalf("invalid UTF-8 in an error: %q, want U+FFFD as encoding/json writes it", fromV1.Errors[1])
	}
	var generic map[string]any
	if err := json.Unmarshal(mine, &generic); err != nil {
		t.Fatal(err)
	}
	for _, omitted := range []string{"replays", "review", "valid_tools", "result"} {
		if _, ok := generic[omitted]; ok {
			t.Errorf("%s is written though empty (omitempty as encoding/json means it)", omitted)
		}
	}
}

// Unknown names are ignored as before; a wrongly typed field is refused.
func TestCodec_refuses_a_wrong_type_and_ignores_unknown_fields(t *testing.T) {
	if _, err := Unmarshal([]byte(`{"call_id":"r-0","response_id":"r","status":"received","repair_attempts":"x"}`)); err == nil {
		t.Fatal("a string repair_attempts decoded")
	}
	e, err := Unmarshal([]byte(`{"call_id":"r-0","response_id":"r","status":"received","extra":1}`))
	if err != nil || e.CallID != "r-0" {
		t.Fatalf("an unknown field: %v %+v", err, e)
	}
}
