package stage

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/idem"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// The issue's record: on the previous main the sweeper panicked on
// r.ArgsHash[:16] and took every stage of the process with it, after every
// restart.
const issueApprovalRecord = `{"status":"approved"}`

func TestPipeline_malformed_approval_record_neither_crashes_the_process_nor_stops_the_sweeper(t *testing.T) {
	p, ex, _ := startGatedPipeline(t, 700*time.Millisecond, 100*time.Millisecond)
	if _, err := p.js.Publish(p.ctx, "$KV."+streams.BucketApprovals+".x-0", []byte(issueApprovalRecord)); err != nil {
		t.Fatal(err)
	}
	// A tool definition nobody applied: the registry leaves it out and serves
	// the others.
	if _, err := p.js.Publish(p.ctx, "$KV."+streams.BucketTools+".get_forecast", []byte(`{"name":"delete_customer_account"}`)); err != nil {
		t.Fatal(err)
	}
	// The sweeper keeps expiring a real pending approval after meeting it.
	p.publishAs("mal-late", "delete_customer_account", deleteArgs, "alice", "admin")
	if r := p.waitResults("mal-late", 1)[0]; r["status"] != "approval_expired" {
		t.Fatalf("ended %v, want approval_expired", r["status"])
	}
	// And a valid call still executes.
	p.publishAs("mal-ok", "get_weather", `{"city":"Paris"}`, "alice", "")
	if r := p.waitResults("mal-ok", 1)[0]; r["status"] != "executed" {
		t.Fatalf("valid call ended %v (%v), want executed", r["status"], r["errors"])
	}
	if got := ex.of("delete_customer_account"); len(got) != 0 {
		t.Fatalf("the expired call ran %d times", len(got))
	}
}

// startPolicy runs the policy stage alone with Deps.Malformed counting into
// m, over a registry that counts too.
func startPolicy(t *testing.T, m *metrics.Metrics) (*approval.Store, func(string) error) {
	t.Helper()
	srv := testenv.RunJetStream(t)
	nc, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	hook := malformedHook(m, log)
	toolsKV, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "$KV."+streams.BucketTools+".junk", []byte(`not a definition`)); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Open(ctx, toolsKV, log, registry.OnMalformed(hook.from(streams.BucketTools)))
	if err != nil {
		t.Fatal(err)
	}
	akv, err := js.KeyValue(ctx, streams.BucketApprovals)
	if err != nil {
		t.Fatal(err)
	}
	store := approval.NewStore(akv)
	set, err := New([]string{streams.Policy}, Deps{NC: nc, JS: js, Tools: reg, Settings: streams.DefaultSettings(), Log: log,
		Approvals: store, ApprovalSweep: 50 * time.Millisecond, Malformed: hook})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- set.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	put := func(key string) error {
		_, err := js.Publish(ctx, "$KV."+streams.BucketApprovals+"."+key, []byte(issueApprovalRecord))
		return err
	}
	return store, put
}

func TestMalformed_records_are_logged_and_counted_by_source_once_each(t *testing.T) {
	m := metrics.New()
	store, put := startPolicy(t, m)
	if err := put("x-0"); err != nil {
		t.Fatal(err)
	}
	// A real pending approval past its expiry: the sweeper must get past
	// x-0 to expire it.
	e := call.New("rm", 0, time.Now())
	e.ToolName, e.Arguments, e.Status = "delete_customer_account", []byte(`{}`), call.ApprovalRequired
	rec, err := approval.NewRecord(e, "test", time.Millisecond, time.Now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Create(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		r, _, err := store.Get(context.Background(), "rm-0")
		if err != nil || r.State != approval.Expired || !r.Resumed {
			return fmt.Errorf("rm-0: %+v %v, want expired and resumed", r.State, err)
		}
		text := scrape(t, m)
		for _, want := range []string{
			`toolgate_malformed_records_total{source="toolgate_approvals"} 1`,
			`toolgate_malformed_records_total{source="toolgate_tools"} 1`,
		} {
			if !strings.Contains(text, want) {
				return fmt.Errorf("metrics lack %s", want)
			}
		}
		return nil
	})
}

func TestMalformed_idempotency_record_handed_to_execute_is_counted(t *testing.T) {
	m := metrics.New()
	rds := testenv.RunRedis(t)
	c := redis.NewClient(&redis.Options{Addr: rds.Addr})
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Set(ctx, "toolgate:idem:k1", "garbage", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s := observeStore(idem.NewRedis(c), malformedHook(m, zerolog.Nop()))
	if rec, found, err := s.Get(ctx, "k1"); err != nil || !found || rec.Malformed == "" {
		t.Fatalf("%+v %v %v, want a malformed stand-in", rec, found, err)
	}
	if !strings.Contains(scrape(t, m), `toolgate_malformed_records_total{source="toolgate_idempotency"} 1`) {
		t.Fatal("the malformed idempotency record was not counted")
	}
}

// scrape reads m's /metrics text.
func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

func TestPipeline_call_arriving_over_a_garbage_approval_record_gets_a_fresh_one_and_can_be_approved(t *testing.T) {
	p, ex, store := startGatedPipeline(t, 0, 0)
	if _, err := p.js.Publish(p.ctx, "$KV."+streams.BucketApprovals+".mal-pre-0", []byte(issueApprovalRecord)); err != nil {
		t.Fatal(err)
	}
	p.publishAs("mal-pre", "delete_customer_account", deleteArgs, "alice", "admin")
	rec := p.waitStatus("mal-pre-0", call.ApprovalRequired)
	if h := notes(rec); !strings.Contains(h, "malformed") {
		t.Fatalf("history %s does not say the earlier record was malformed", h)
	}
	decide(t, p, store, "mal-pre-0", approval.Approved, "carol", "checked")
	if r := p.waitResults("mal-pre", 1)[0]; r["status"] != "executed" {
		t.Fatalf("ended %v (%v), want executed after approval", r["status"], r["errors"])
	}
	if got := ex.of("delete_customer_account"); len(got) != 1 {
		t.Fatalf("ran %d times, want once", len(got))
	}
}
