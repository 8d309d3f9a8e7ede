package stage

import (
	"fmt"
	"testing"

	"github.com/toolgate/toolgate/internal/records"
	"github.com/toolgate/toolgate/streams"
)

// With P = 3 every stage publishes a call's result in its partition's
// results stream: a response of partition k has its result in
// TOOLGATE_RESULTS (k = 0) or TOOLGATE_RESULTS_<k>, on
// toolgate.results.<tenant>.<rid>[.p<k>], and nowhere else (a response
// without a call too: accumulate's response-level result); the records
// reader (toolgate status, calls ls, the console, whatif) finds each.
func TestPartitions_results_are_stored_in_their_partitions_stream(t *testing.T) {
	r := startPartRig(t, 3)
	r.run(3, streams.Accumulate, streams.Parse, streams.Validate, streams.Business, streams.Policy, streams.Repair, streams.Execute)
	byPart := map[int][]string{}
	for i := 0; len(byPart[0]) < 2 || len(byPart[1]) < 2 || len(byPart[2]) < 2; i++ {
		rid := fmt.Sprintf("res-%d", i)
		p := streams.Partition("acme", rid, 3)
		if len(byPart[p]) == 2 {
			continue
		}
		byPart[p] = append(byPart[p], rid)
		r.publish(rid, "openai-chat", chat(rid, "create_invoice", validInvoice, "tool_calls"), streams.HeaderTenant, "acme")
	}
	var rids []string
	for p := range 3 {
		rids = append(rids, byPart[p]...)
	}
	r.exactlyOnce(rids)
	reader := records.Reader{JS: r.js}
	for p, ids := range byPart {
		for _, rid := range ids {
			for q := range 3 {
				rs := r.resultsIn(streams.ResultsStreamRef{P: q, Name: streams.ResultsStream(q)}, rid)
				if want := map[bool]int{true: 1, false: 0}[q == p]; len(rs) != want {
					t.Fatalf("%s (partition %d) has %d results in %s, want %d", rid, p, len(rs), streams.ResultsStream(q), want)
				}
			}
			callID, _ := r.results(rid)[0]["call_id"].(string)
			res, err := reader.Result(r.ctx, callID)
			if err != nil || res == nil || res.CallID != callID {
				t.Fatalf("the records reader on %s (partition %d): %+v, %v", callID, p, res, err)
			}
		}
	}
	// A response without a call: accumulate's response-level result, in
	// the response's partition too.
	for p := 1; p < 3; p++ {
		rid := ""
		for i := 0; rid == ""; i++ {
			if id := fmt.Sprintf("none-%d", i); streams.Partition("acme", id, 3) == p {
				rid = id
			}
		}
		r.publish(rid, "openai-chat", []byte(`{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}]}`), streams.HeaderTenant, "acme")
		r.waitResults(rid, 1)
		if rs := r.resultsIn(streams.ResultsStreamRef{P: p, Name: streams.ResultsStream(p)}, rid); len(rs) != 1 || rs[0]["status"] != "no_tool_calls" {
			t.Fatalf("%s's response-level result in %s: %v", rid, streams.ResultsStream(p), rs)
		}
	}
	list, err := reader.List(r.ctx, "", 100, nil, nil)
	if err != nil || len(list) != len(rids) {
		t.Fatalf("the records reader's list: %d records, %v; want %d", len(list), err, len(rids))
	}
}
