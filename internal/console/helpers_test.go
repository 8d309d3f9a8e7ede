package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/cookiejar"
	"regexp"
	"testing"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/streams"
)

func newJar() (*cookiejar.Jar, error) { return cookiejar.New(nil) }

func errNot(what string) error { return errors.New("no " + what + " yet") }

func (r *rig) approvalRecord(id string) approval.Record {
	r.t.Helper()
	kv, err := r.js.KeyValue(context.Background(), streams.BucketApprovals)
	if err != nil {
		r.t.Fatal(err)
	}
	rec, _, err := approval.NewStore(kv).Get(context.Background(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return rec
}

var jobRe = regexp.MustCompile(`replay:([0-9a-f]+)`)

// lastURL is the replay page a replay's answer is (its events topic names
// the job).
func lastURL(t *testing.T, r *rig, body string) string {
	t.Helper()
	m := jobRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no replay job on the page:\n%s", body)
	}
	return r.ts.URL + Prefix + "dlq/replays/" + m[1]
}

// tool stores a definition in the tools bucket.
func (r *rig) tool(def string) {
	r.t.Helper()
	var d struct{ Name string }
	if err := json.Unmarshal([]byte(def), &d); err != nil {
		r.t.Fatal(err)
	}
	kv, err := r.js.KeyValue(context.Background(), streams.BucketTools)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := kv.Put(context.Background(), d.Name, []byte(def)); err != nil {
		r.t.Fatal(err)
	}
}

func emptySummary() dlq.Summary { return dlq.Summary{} }
