package httpingest

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/pkg/wire"
)

// With --partitions P > 1 a response's outcomes may come on
// toolgate.results.<tenant>.<rid>.p<k>: the cache counts them under the
// response's subject, the one GET outcomes reads, with partition 0's.
func TestCache_counts_a_partitions_outcome_under_its_response(t *testing.T) {
	c := newCache(time.Minute, 1<<20, 10, 4)
	c.add(wire.ResultsPartition("acme", "r1", 2), []byte(`{"call_id":"acme=r1-0","response_calls":2}`))
	c.add(wire.Results("acme", "r1"), []byte(`{"call_id":"acme=r1-1","response_calls":2}`))
	if v := c.peek(wire.Results("acme", "r1")); v.Calls != 2 || !v.complete(0) {
		t.Fatalf("r1's outcomes: %+v", v)
	}
	if wire.ResultsResponseID(wire.ResultsPartition("acme", "r1", 2)) != "r1" || wire.ResultsResponseID(wire.Results("acme", "r1")) != "r1" {
		t.Fatal("the response id of a results subject")
	}
}
