package textcall

import (
	"strings"
	"testing"
)

// prose4KiB is 4 KiB of assistant prose with braces, brackets and quotes in
// it but no call.
var prose4KiB = func() string {
	para := `The forecast for Paris (see [1]) says "mild", with {temperature} near 18°C; ` +
		`the model's notes mention f(x) and a set {a, b}. `
	var b strings.Builder
	for b.Len() < 4096 {
		b.WriteString(para)
	}
	return b.String()[:4096]
}()

var prose4KiBOneCall = prose4KiB[:2048] +
	`{"name": "get_weather", "arguments": {"city": "Paris", "units": "metric"}}` +
	prose4KiB[2048+75:]

func BenchmarkRecover_4KiB_no_call(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(prose4KiB)))
	for b.Loop() {
		if calls, _ := Recover(prose4KiB); len(calls) != 0 {
			b.Fatal(calls)
		}
	}
}

func BenchmarkRecover_4KiB_one_call(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(prose4KiBOneCall)))
	for b.Loop() {
		if calls, _ := Recover(prose4KiBOneCall); len(calls) != 1 {
			b.Fatal(calls)
		}
	}
}
