package worker

import (
	"slices"
	"testing"
)

// A share's durables may sit in streams of their own (Share.Streams:
// accumulate's of TOOLGATE_IN and TOOLGATE_RESPONSES); unset, they are the
// share's Stream, else the worker's.
func TestSources_a_shares_durables_may_sit_in_streams_of_their_own(t *testing.T) {
	w := &Worker{cfg: Config{Stream: "IN", Shares: []Share{
		{Durables: []string{"acc", "acc_r"}, Streams: []string{"", "RESP"}},
		{Stream: "LANES", Durables: []string{"l0", "l0r", "l0b"}, Streams: []string{"IN", "RESP"}},
	}}}
	want := []source{{"IN", "acc"}, {"RESP", "acc_r"}, {"IN", "l0"}, {"RESP", "l0r"}, {"LANES", "l0b"}}
	if got := w.sources(nil); !slices.Equal(got, want) {
		t.Fatalf("sources %v, want %v", got, want)
	}
}
