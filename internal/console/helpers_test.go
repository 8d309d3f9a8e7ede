package console

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
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

// lastURL is the replay page a replay's post was sent to.
func lastURL(t *testing.T, r *rig, body string) string {
	t.Helper()
	if !strings.Contains(r.last, Prefix+"dlq/replays/") {
		t.Fatalf("the replay did not lead to its page (%s):\n%s", r.last, body)
	}
	return r.last
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

func tlsState() *tls.ConnectionState { return &tls.ConnectionState{} }

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }
