package textcall

import (
	"strings"
	"testing"
)

// plain4KiB is 4 KiB of prose with no bracket, brace or angle bracket: the
// common answer, which every marker dialect must pass over cheaply.
var plain4KiB = func() string {
	para := `The forecast for Paris says "mild", with temperatures near 18°C; ` +
		`the model's notes mention functions, tools and a call made earlier. `
	var b strings.Builder
	for b.Len() < 4096 {
		b.WriteString(para)
	}
	return b.String()[:4096]
}()

func BenchmarkRecover_4KiB_plain_prose(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(plain4KiB)))
	for b.Loop() {
		if calls, discards := Recover(plain4KiB); len(calls) != 0 || len(discards) != 0 {
			b.Fatal(calls, discards)
		}
	}
}
