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
	want := []source{{"IN", "acc", false}, {"RESP", "acc_r", false}, {"IN", "l0", false}, {"RESP", "l0r", false}, {"LANES", "l0b", false}}
	if got := w.sources(nil); !slices.Equal(got, want) {
		t.Fatalf("sources %v, want %v", got, want)
	}
}

// With PartOf, a partition stream is read only for the durables whose
// partition 0 stream it partitions: accumulate's claimed durables in
// TOOLGATE_RESPONSES' partitions, none of its TOOLGATE_IN durables.
func TestSources_a_partition_holds_only_the_durables_PartOf_names(t *testing.T) {
	w := &Worker{cfg: Config{Stream: "IN", Shares: []Share{
		{Durables: []string{"acc", "acc_r"}, Streams: []string{"", "RESP"}},
	}, PartOf: func(stream, _ string) bool { return stream == "RESP" }}}
	want := []source{{"IN", "acc", false}, {"RESP_1", "acc", true}, {"RESP", "acc_r", false}, {"RESP_1", "acc_r", false}}
	if got := w.sources([]string{"RESP_1"}); !slices.Equal(got, want) {
		t.Fatalf("sources %v, want %v", got, want)
	}
}
