package natslog

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// One error that repeats is one line per interval, with the count of the
// repeats it stood for; another error gets its own line at once.
func TestAsyncErrors_a_repeating_error_is_one_line_per_interval(t *testing.T) {
	var logged bytes.Buffer // the handler is called on this goroutine
	h := AsyncErrors(zerolog.New(&logged), 200*time.Millisecond)
	refused := errors.New("nats: permissions violation for publish to x")
	for range 100 {
		h(nil, nil, refused)
	}
	h(nil, nil, errors.New("nats: slow consumer, messages dropped"))
	h(nil, nil, nil)
	lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), logged.String())
	}
	time.Sleep(250 * time.Millisecond)
	h(nil, nil, refused)
	lines = strings.Split(strings.TrimSpace(logged.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[2], `"repeated":99`) || !strings.Contains(lines[2], "permissions violation") {
		t.Fatalf("after the interval, want a third line with the 99 repeats:\n%s", logged.String())
	}
}
