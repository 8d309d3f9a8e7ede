package run

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Before, a log that was not a terminal (make run's output, a CI log) got
// raw ANSI colour codes, and every timestamp read .000.
func TestLogger_plain_when_not_a_terminal_with_milliseconds(t *testing.T) {
	var b bytes.Buffer
	log := newLogger(&b, false)
	for ms := time.Now().Nanosecond() / 1e6; ms < 100 || ms > 900; ms = time.Now().Nanosecond() / 1e6 {
	} // away from a whole second, so .000 can only mean milliseconds dropped
	log.Info().Str("k", "v").Msg("hello")
	out := b.String()
	if strings.Contains(out, "\x1b[") {
		t.Fatalf("ANSI escapes in a log that is not a terminal: %q", out)
	}
	m := regexp.MustCompile(`^\d\d:\d\d:\d\d\.(\d{3}) INF hello k=v`).FindStringSubmatch(out)
	if m == nil || m[1] == "000" {
		t.Fatalf("log line %q: want HH:MM:SS.mmm with its milliseconds, INF, the message and fields", out)
	}
	var c bytes.Buffer
	colour := newLogger(&c, true)
	colour.Info().Msg("hello")
	if !strings.Contains(c.String(), "\x1b[") {
		t.Fatalf("no colour on a terminal: %q", c.String())
	}
}
