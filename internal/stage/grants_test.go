package stage

import (
	"testing"

	"github.com/toolgate/toolgate/streams"
)

func TestGrants_least_privilege_stage_may_only_its_own(t *testing.T) {
	lp := grantsOf(Config{Stages: []string{streams.Execute}, SkipEnsure: true})
	if lp("$JS.API.STREAM.INFO." + streams.StreamDLQ) {
		t.Error("a least-privilege execute may read the dead-letter stream's info")
	}
	if !lp("$JS.API.STREAM.INFO.KV_" + streams.BucketIdempotency) {
		t.Error("execute may not read its own bucket")
	}
	if admin := grantsOf(Config{Stages: []string{streams.Execute}}); !admin("$JS.API.STREAM.INFO." + streams.StreamDLQ) {
		t.Error("a process that applies the topology is refused")
	}
	for _, c := range []struct {
		filter, subject string
		want            bool
	}{
		{"a.*.c", "a.b.c", true}, {"a.>", "a.b.c", true}, {"a.>", "a", false}, {"a.b", "a.b.c", false}, {"a.*", "a", false},
	} {
		if got := subjectMatches(c.filter, c.subject); got != c.want {
			t.Errorf("%s ~ %s = %v", c.filter, c.subject, got)
		}
	}
}
