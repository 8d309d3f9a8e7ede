package rules

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestNormalize_integral_numbers_become_int64(t *testing.T) {
	in := map[string]any{
		"a": json.Number("2.0"), "b": json.Number("1e2"), "c": json.Number("2.5"), "d": json.Number("7"),
		"e": float64(3), "f": 0.25, "g": []any{json.Number("4.0"), "x"}, "h": map[string]any{"i": float64(-1)},
		"big": json.Number("1e300"),
	}
	want := map[string]any{
		"a": int64(2), "b": int64(100), "c": json.Number("2.5"), "d": json.Number("7"),
		"e": int64(3), "f": 0.25, "g": []any{int64(4), "x"}, "h": map[string]any{"i": int64(-1)},
		"big": json.Number("1e300"),
	}
	got := Normalize(in)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	if in["a"] != json.Number("2.0") {
		t.Error("Normalize modified its input")
	}
}

func TestNormalize_returns_args_unchanged_when_nothing_to_do(t *testing.T) {
	in := map[string]any{"a": json.Number("7"), "b": "x", "c": []any{json.Number("1.5")}}
	got := Normalize(in)
	if reflect.ValueOf(got).Pointer() != reflect.ValueOf(in).Pointer() {
		t.Error("Normalize copied arguments that needed no change")
	}
}
