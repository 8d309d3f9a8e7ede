package ingest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/testenv"
)

// held reports the entries and event bytes the progress cache holds.
func (c *progressCache) held() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		return 0, 0
	}
	return c.m.len(), c.m.bytes
}

// holds reports whether the progress cache follows rid.
func (c *progressCache) holds(rid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		return false
	}
	_, ok := c.m.items[rid]
	return ok
}

// bigChunk is an openai-chat chunk that starts a call with n argument bytes.
func bigChunk(n int) []byte {
	return []byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_weather","arguments":"` +
		strings.Repeat("a", n) + `"}}]}}]}`)
}

// TestStream_progress_cache_stays_within_its_byte_budget: ten open streams
// of one big event each (which used to stay in the cache whole, ~215 MB for
// ten 15 MB events) leave at most the budget held.
func TestStream_progress_cache_stays_within_its_byte_budget(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	a := gate(r.js, time.Hour)
	a.ProgressBudget = 1 << 20
	runAccumulate(t, r.js, a, nil)
	for i := range 10 {
		publishEvents(t, r.js, fmt.Sprintf("big-%d", i), provider.OpenAIChat, []event{{seq: 1, data: bigChunk(300 << 10)}})
	}
	r.settled(t)
	entries, bytes := a.prog.held()
	if bytes > a.ProgressBudget || entries > 3 {
		t.Fatalf("progress cache holds %d streams, %d bytes; budget %d bytes", entries, bytes, a.ProgressBudget)
	}
	if !a.prog.holds("big-9") {
		t.Error("the most recent stream is not followed")
	}
	// An event larger than the whole budget is not followed at all.
	publishEvents(t, r.js, "huge", provider.OpenAIChat, []event{{seq: 1, data: bigChunk(2 << 20)}})
	r.settled(t)
	if _, bytes := a.prog.held(); a.prog.holds("huge") || bytes > a.ProgressBudget {
		t.Fatalf("an event over the budget is held (%d bytes)", bytes)
	}
}

// TestStream_progress_entry_goes_when_its_stream_settles: a stream settled
// by a Toolgate-End, and one settled by its idle timer, leave nothing in
// the progress cache (it used to drop an entry only when this replica saw
// the provider's terminal event itself).
func TestStream_progress_entry_goes_when_its_stream_settles(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	a := gate(r.js, 300*time.Millisecond)
	runAccumulate(t, r.js, a, nil)
	for _, test := range []struct {
		rid  string
		rest []event
	}{
		{"settled-by-end", []event{{isEnd: true, end: "client went away"}}},
		{"settled-by-timer", nil},
	} {
		t.Run(test.rid, func(t *testing.T) {
			publishEvents(t, r.js, test.rid, provider.OpenAIChat, []event{{seq: 1, data: bigChunk(10)}})
			testenv.Eventually(t, 5*time.Second, 5*time.Millisecond, func() error {
				if !a.prog.holds(test.rid) {
					return errors.New("the first event is not followed yet")
				}
				return nil
			})
			publishEvents(t, r.js, test.rid, provider.OpenAIChat, test.rest)
			r.finishedMark(t, test.rid)
			testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
				if res := r.resultsFor(test.rid); len(res) != 1 || res[0].Status != call.TransportIncomplete {
					return fmt.Errorf("results %+v, want one transport_incomplete", res)
				}
				return nil
			})
			if a.prog.holds(test.rid) {
				t.Fatal("the progress cache still follows a settled stream")
			}
			a.asm.mu.Lock()
			el, held := a.asm.m.items[test.rid]
			a.asm.mu.Unlock()
			// What stays is a settled mark of no size, so a late caller
			// does not settle the stream again.
			if held && (!el.Value.(*lruItem[*asmEntry]).val.settled || el.Value.(*lruItem[*asmEntry]).size != 0) {
				t.Fatal("the assembly cache still holds a settled stream's assembly")
			}
		})
	}
}
