package wirejson

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

type record struct {
	ID      string          `json:"id"`
	N       int             `json:"n,omitempty"`
	Flag    bool            `json:"flag,omitempty"`
	List    []string        `json:"list,omitempty"`
	Nil     []string        `json:"nil"`
	Raw     json.RawMessage `json:"raw,omitempty"`
	At      time.Time       `json:"at"`
	Pointer *record         `json:"pointer,omitempty"`
}

// What encoding/json writes, wirejson reads to the same value, and the other
// way round; the empty fields omitempty leaves out stay out, a nil slice is
// null as before, and invalid UTF-8 becomes U+FFFD as before.
func TestWirejson_agrees_with_encoding_json(t *testing.T) {
	in := record{ID: "a<b>&\u2028\xff", Raw: json.RawMessage(` {"x": [1, 2]} `), At: time.Date(2026, 12, 1, 1, 2, 3, 4, time.UTC), Pointer: &record{ID: "p"}}
	v1, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var a, b record
	if err := Unmarshal(v1, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mine, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("disagree:\n%+v\n%+v", a, b)
	}
	if a.ID != "a<b>&\u2028\ufffd" {
		t.Fatalf("id %q", a.ID)
	}
	var m map[string]any
	if err := json.Unmarshal(mine, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"n", "flag", "list"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s written though empty", k)
		}
	}
	if v, ok := m["nil"]; !ok || v != nil {
		t.Errorf("nil slice: %v %v, want null", v, ok)
	}
}

// Names match exactly: another spelling is an unknown name, ignored.
func TestWirejson_names_match_exactly(t *testing.T) {
	var r record
	if err := Unmarshal([]byte(`{"ID":"x","id":"y"}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.ID != "y" {
		t.Fatalf("id %q", r.ID)
	}
	if err := Unmarshal([]byte(`{"n":"x"}`), &r); err == nil {
		t.Fatal("a string n decoded")
	}
}
