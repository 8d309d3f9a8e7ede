package call

import (
	"encoding/json"
	"strings"
	"testing"
)

// Arguments and text that are not UTF-8 cross every hop byte for byte.
// encoding/json wrote them as U+FFFD, so the parse gate accepted arguments
// the model never wrote and the call executed.
func TestEnvelope_raw_arguments_and_text_that_are_not_utf8_survive_encoding(t *testing.T) {
	e := New("r", 0, t0)
	e.RawArguments = "{\"city\":\"Par\xffis\",\"x\":\"\xed\xa0\x80\"}"
	e.Text = "call f(\xff)"
	e.Repairs = []Repair{{Attempt: 1, Failure: InvalidJSON, RawArguments: "{\"a\":\"\xc0\"}", At: t0}}
	data, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(data) || !strings.Contains(string(data), `"raw_arguments_b64":`) || !strings.Contains(string(data), `"text_b64":`) {
		t.Fatalf("encoded %s: want valid JSON with raw_arguments_b64 and text_b64", data)
	}
	got, err := Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.RawArguments != e.RawArguments || got.Text != e.Text || got.Repairs[0].RawArguments != e.Repairs[0].RawArguments {
		t.Fatalf("decoded %q / %q / %q, want %q / %q / %q", got.RawArguments, got.Text, got.Repairs[0].RawArguments,
			e.RawArguments, e.Text, e.Repairs[0].RawArguments)
	}
	if got.CallID != e.CallID || got.Status != e.Status || len(got.History) != 1 {
		t.Fatalf("other fields lost: %+v", got)
	}
}

// Valid UTF-8 is encoded as before, with no extra field, so envelopes and
// dead letters written before decode the same.
func TestEnvelope_utf8_arguments_encode_as_before(t *testing.T) {
	e := New("r", 0, t0)
	e.RawArguments, e.Text = `{"city":"Zürich \ud83d"}`, "é"
	data, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "_b64") {
		t.Fatalf("encoded %s: no base64 field wanted for UTF-8", data)
	}
	type plain Envelope // encoding/json's own encoding, without the methods
	want, _ := json.Marshal(plain(e))
	if string(data) != string(want) {
		t.Fatalf("encoded\n%s\nwant\n%s", data, want)
	}
	got, err := Unmarshal(data)
	if err != nil || got.RawArguments != e.RawArguments || got.Text != e.Text {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	if _, err := Unmarshal([]byte(`{"call_id":"r-0","response_id":"r","status":"received","raw_arguments_b64":"!!"}`)); err == nil ||
		!strings.Contains(err.Error(), "raw_arguments_b64 is not base64") {
		t.Fatalf("bad base64: %v", err)
	}
}
