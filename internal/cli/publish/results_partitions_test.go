package publish

import (
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/cli/clitest"
	"github.com/toolgate/toolgate/streams"
)

// With P = 3 a response of partition 1 or 2 has its result in
// TOOLGATE_RESULTS_1 or _2: `toolgate results` and `status RESPONSE-ID` find
// it there, and `results --follow` reads it too.
func TestResults_finds_a_result_in_its_partitions_stream(t *testing.T) {
	r := clitest.StartPartitionedStoryRig(t, 3)
	for want := 1; want < 3; want++ {
		rid := ""
		for i := 0; rid == ""; i++ {
			if id := "part-" + strconv.Itoa(i); streams.Partition("acme", id, 3) == want {
				rid = id
			}
		}
		r.PublishAs(t, "acme", rid, clitest.ToolCall{ID: "call_ok", Name: "get_weather", Args: `{"city":"Paris"}`})
		r.WaitFor(t, resultsCmd, []string{rid}, "result    ok, executed")
		st, err := r.JS.Stream(t.Context(), streams.ResultsStream(want))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.GetLastMsgForSubject(t.Context(), streams.ResultsIn("acme", rid, 3)); err != nil {
			t.Fatalf("%s's result is not in %s: %v", rid, streams.ResultsStream(want), err)
		}
		out, err := r.Run(resultsCmd, rid, "--follow", "--timeout", "30s")
		if err != nil || !strings.Contains(out, "result    ok, executed") {
			t.Fatalf("results --follow of %s (partition %d): %v\n%s", rid, want, err, out)
		}
		out = r.WaitFor(t, statusCmd, []string{rid}, "executed")
		if !strings.Contains(out, rid) {
			t.Fatalf("status of %s:\n%s", rid, out)
		}
	}
}
