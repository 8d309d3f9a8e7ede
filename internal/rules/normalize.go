package rules

import (
	"encoding/json"
	"math"
)

// Normalize prepares decoded JSON arguments for CEL. cel-go reads json.Number itself
// (int when it is written as an integer, double otherwise), so numbers that JSON Schema
// counts as integers but are written 2.0 or 1e2, and integral float64 values from a
// decoder without UseNumber, would reach CEL as doubles, and int * double is an error in
// CEL. Normalize turns those into int64 so arithmetic on schema integers works however
// they were written. Other numbers stay as they are. args is never modified: when nothing
// needs changing it is returned as is, else a changed copy.
func Normalize(args map[string]any) map[string]any {
	if !needsNormalize(args) {
		return args
	}
	return normalize(args).(map[string]any)
}

func integral(v any) (int64, bool) {
	var f float64
	switch n := v.(type) {
	case json.Number:
		if _, err := n.Int64(); err == nil {
			return 0, false // cel-go already reads it as int
		}
		var err error
		if f, err = n.Float64(); err != nil {
			return 0, false
		}
	case float64:
		f = n
	default:
		return 0, false
	}
	// ±2^53: beyond it a float64 no longer holds every integer exactly.
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

func needsNormalize(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			if needsNormalize(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if needsNormalize(e) {
				return true
			}
		}
	default:
		_, ok := integral(v)
		return ok
	}
	return false
}

func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalize(e)
		}
		return out
	}
	if i, ok := integral(v); ok {
		return i
	}
	return v
}
