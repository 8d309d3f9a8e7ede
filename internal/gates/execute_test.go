package gates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/idem"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/worker"
)

// execTools is a fixed registry.
type execTools map[string]*tool.Compiled

func (m execTools) Lookup(n string) (*tool.Compiled, bool) { t, ok := m[n]; return t, ok }
func (m execTools) Names() []string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	return out
}

func compiled(t testing.TB, d tool.Definition) *tool.Compiled {
	t.Helper()
	if d.InputSchema == nil {
		d.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	c, err := tool.Compile(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// countingExec counts executions and answers status queries from what it
// ran, like a tool that stores its idempotency keys.
type countingExec struct {
	runs    atomic.Int32
	queries atomic.Int32
	err     error      // returned by Execute when set (after counting nothing)
	mu      sync.Mutex // ran is written by calls running at once (a batch)
	ran     map[string]execute.Reply
}

func (c *countingExec) Execute(ctx context.Context, r execute.Request) (execute.Reply, error) {
	if c.err != nil {
		return execute.Reply{}, c.err
	}
	c.runs.Add(1)
	rep := execute.Reply{OK: true, Result: json.RawMessage(fmt.Sprintf(`{"call":%q}`, r.CallID))}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ran == nil {
		c.ran = map[string]execute.Reply{}
	}
	c.ran[r.IdempotencyKey] = rep
	return rep, nil
}

func (c *countingExec) Status(ctx context.Context, r execute.Request) (execute.StatusReply, error) {
	c.queries.Add(1)
	c.mu.Lock()
	rep, ok := c.ran[r.IdempotencyKey]
	c.mu.Unlock()
	if !ok {
		return execute.StatusReply{Known: false}, nil
	}
	return execute.StatusReply{Known: true, OK: rep.OK, Result: rep.Result}, nil
}

// plainExec cannot answer status queries.
type plainExec struct{ runs atomic.Int32 }

func (p *plainExec) Execute(context.Context, execute.Request) (execute.Reply, error) {
	p.runs.Add(1)
	return execute.Reply{OK: true}, nil
}

func redisStore(t testing.TB) *idem.Redis {
	t.Helper()
	r := testenv.RunRedis(t)
	c := redis.NewClient(&redis.Options{Addr: r.Addr})
	t.Cleanup(func() { c.Close() })
	return idem.NewRedis(c)
}

// approved is a call as policy hands it to execute, with every gate's seal.
func approved(rid string, index int, toolName, args string) call.Envelope {
	return sealed(unsealed(rid, index, toolName, args))
}

// unsealed is approved without its seals.
func unsealed(rid string, index int, toolName, args string) call.Envelope {
	e := call.New(rid, index, time.Now())
	e.ToolName, e.Provider, e.Arguments, e.RawArguments = toolName, "openai-chat", json.RawMessage(args), args
	e.Status = call.Approved
	return e
}

// testSeals are the seal keys of the gates in these tests.
var testSeals = func() *seal.Keyring {
	kr, err := seal.Ephemeral(seal.Sealing())
	if err != nil {
		panic(err)
	}
	return kr
}()

// sealed gives e every gate's seal, as if each had passed it.
func sealed(e call.Envelope) call.Envelope {
	if err := sealtest.Apply(testSeals, &e); err != nil {
		panic(err)
	}
	return e
}

func newExecute(t *testing.T, store idem.Store, ex execute.Executor, tools execTools) *Execute {
	return &Execute{
		Tools: tools, Store: store, Owner: "test-owner", Now: time.Now, Seals: testSeals,
		Executors: func(*tool.Compiled) execute.Executor { return ex },
	}
}

// expiredClaim leaves a pending record of e held by a vanished owner whose
// lease ran out: what a worker killed after calling the executor leaves.
func expiredClaim(t *testing.T, store idem.Store, e call.Envelope) string {
	t.Helper()
	key := idem.Key(e.CallID, e.ToolName, e.Arguments)
	rec := idem.Record{Key: key, CallID: e.CallID, Tool: e.ToolName, Fingerprint: idem.Fingerprint(e.ToolName, e.Arguments),
		Owner: "killed-worker", LeaseUntil: time.Now().Add(-time.Second), ClaimedAt: time.Now().Add(-time.Minute)}
	if _, claimed, err := store.Claim(context.Background(), rec, time.Hour); err != nil || !claimed {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	return key
}

func TestExecute_expired_claim_known_to_the_executor_is_reconciled_not_rerun(t *testing.T) {
	store := redisStore(t)
	ex := &countingExec{}
	tools := execTools{"charge": compiled(t, tool.Definition{Name: "charge"})}
	e := approved("resp-rec", 0, "charge", `{"amount":5}`)
	key := expiredClaim(t, store, e)
	// The killed worker's executor call did happen:
	ex.ran = map[string]execute.Reply{key: {OK: true, Result: json.RawMessage(`{"charged":5}`)}}
	out, err := newExecute(t, store, ex, tools).Handle(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Status != call.Executed || string(out[0].Result) != `{"charged":5}` {
		t.Fatalf("status %s result %s, want executed with the executor's remembered answer", out[0].Status, out[0].Result)
	}
	if ex.runs.Load() != 0 || ex.queries.Load() != 1 {
		t.Fatalf("runs %d queries %d, want 0 runs and 1 status query", ex.runs.Load(), ex.queries.Load())
	}
	rec, _, _ := store.Get(context.Background(), key)
	if rec.State != idem.Completed || string(rec.Result) != `{"charged":5}` {
		t.Fatalf("record %+v, want completed with the reconciled answer", rec)
	}
	// A later delivery gets the stored answer, still without running.
	again, err := newExecute(t, store, ex, tools).Handle(context.Background(), approved("resp-rec", 0, "charge", `{"amount":5}`))
	if err != nil || again[0].Status != call.Executed || ex.runs.Load() != 0 {
		t.Fatalf("redelivery: %v %v runs=%d", again, err, ex.runs.Load())
	}
}

func TestExecute_expired_claim_unknown_to_the_executor_is_outcome_unknown(t *testing.T) {
	store := redisStore(t)
	ex := &countingExec{}
	tools := execTools{"charge": compiled(t, tool.Definition{Name: "charge"})}
	e := approved("resp-unk", 0, "charge", `{"amount":5}`)
	expiredClaim(t, store, e)
	out, err := newExecute(t, store, ex, tools).Handle(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Status != call.OutcomeUnknown || ex.runs.Load() != 0 || ex.queries.Load() != 1 {
		t.Fatalf("status %s runs %d queries %d, want outcome_unknown after one query and no run", out[0].Status, ex.runs.Load(), ex.queries.Load())
	}
}

func TestExecute_expired_claim_with_an_executor_that_cannot_answer_is_outcome_unknown(t *testing.T) {
	store := redisStore(t)
	ex := &plainExec{}
	tools := execTools{"charge": compiled(t, tool.Definition{Name: "charge"})}
	e := approved("resp-plain", 0, "charge", `{"amount":5}`)
	expiredClaim(t, store, e)
	out, err := newExecute(t, store, ex, tools).Handle(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Status != call.OutcomeUnknown || ex.runs.Load() != 0 {
		t.Fatalf("status %s runs %d, want outcome_unknown, never a blind re-run", out[0].Status, ex.runs.Load())
	}
}

func TestExecute_not_run_releases_the_claim_so_a_retry_runs_once(t *testing.T) {
	store := redisStore(t)
	ex := &countingExec{err: fmt.Errorf("%w: connection refused", execute.ErrNotRun)}
	tools := execTools{"charge": compiled(t, tool.Definition{Name: "charge"})}
	x := newExecute(t, store, ex, tools)
	e := approved("resp-nr", 0, "charge", `{"amount":5}`)
	_, err := x.Handle(context.Background(), e)
	var we *worker.Error
	if !errors.As(err, &we) || we.Permanent || we.Code != "executor_unavailable" {
		t.Fatalf("error %v, want a transient executor_unavailable", err)
	}
	if _, found, _ := store.Get(context.Background(), idem.Key(e.CallID, e.ToolName, e.Arguments)); found {
		t.Fatal("the claim was kept although the executor never received the call")
	}
	ex.err = nil
	out, err := x.Handle(context.Background(), e)
	if err != nil || out[0].Status != call.Executed || ex.runs.Load() != 1 {
		t.Fatalf("retry: %v %v runs=%d, want executed once", out, err, ex.runs.Load())
	}
}

func TestExecute_http_executor_outcomes(t *testing.T) {
	var hits atomic.Int32
	var gotKey atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		gotKey.Store(r.Header.Get("Idempotency-Key"))
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte(`{"invoice_id":"inv_1"}`))
		case "/bad":
			w.WriteHeader(422)
			w.Write([]byte(`{"error":"currency YEN is not supported"}`))
		default:
			w.WriteHeader(500)
		}
	}))
	defer srv.Close()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := "http://" + l.Addr().String()
	l.Close()
	loopback, err := execute.ParseDestinations("127.0.0.1") // the test servers
	if err != nil {
		t.Fatal(err)
	}
	sel := execute.Selector{Allow: loopback}
	for _, c := range []struct {
		path string
		want call.Status
		err  string
	}{
		{srv.URL + "/ok", call.Executed, ""},
		{srv.URL + "/bad", call.ExecutionFailed, ""},
		{srv.URL + "/boom", call.OutcomeUnknown, ""},
		{refused, "", "executor_unavailable"},
	} {
		t.Run(c.path, func(t *testing.T) {
			store := redisStore(t)
			tl := compiled(t, tool.Definition{Name: "charge", Executor: tool.Executor{Type: "http", URL: c.path}})
			x := &Execute{Tools: execTools{"charge": tl}, Store: store, Owner: "o", Now: time.Now, Executors: sel.For, Seals: testSeals}
			before := hits.Load()
			e := approved("resp-http", 0, "charge", `{"amount":5}`)
			out, err := x.Handle(context.Background(), e)
			if c.err != "" {
				var we *worker.Error
				if !errors.As(err, &we) || we.Code != c.err {
					t.Fatalf("error %v, want transient %s", err, c.err)
				}
				if _, found, _ := store.Get(context.Background(), idem.Key(e.CallID, e.ToolName, e.Arguments)); found {
					t.Fatal("claim kept for a call that was never sent")
				}
				return
			}
			if err != nil || out[0].Status != c.want {
				t.Fatalf("got %v %v, want %s", out, err, c.want)
			}
			if hits.Load() != before+1 || gotKey.Load() != idem.Key(e.CallID, e.ToolName, e.Arguments) {
				t.Fatalf("server hits %d, Idempotency-Key %v", hits.Load()-before, gotKey.Load())
			}
			// A redelivery never sends it again.
			again, err := x.Handle(context.Background(), approved("resp-http", 0, "charge", `{"amount":5}`))
			if hits.Load() != before+1 {
				t.Fatalf("redelivery sent it again (%d hits)", hits.Load()-before)
			}
			if c.want == call.OutcomeUnknown {
				// This process remembers it sent the call without an
				// answer: still unknown, never sent again.
				if err != nil || again[0].Status != call.OutcomeUnknown {
					t.Fatalf("redelivery of an unknown outcome: %v %v, want outcome_unknown", again, err)
				}
				// Another process waits on the claim until its lease runs
				// out, then reconciles; it does not send it either.
				other := &Execute{Tools: x.Tools, Store: store, Owner: "o2", Now: time.Now, Executors: sel.For, Seals: testSeals}
				_, err = other.Handle(context.Background(), approved("resp-http", 0, "charge", `{"amount":5}`))
				var we *worker.Error
				if !errors.As(err, &we) || we.Code != "claimed_elsewhere" || hits.Load() != before+1 {
					t.Fatalf("another replica: %v (hits %d), want to wait on the claim", err, hits.Load()-before)
				}
				return
			}
			if err != nil || again[0].Status != c.want {
				t.Fatalf("redelivery ended %s, want the stored %s", again[0].Status, c.want)
			}
		})
	}
}

// lostAnswerExec runs the call (when ran is set, it remembers the key) but
// its answer never comes back, as when a reply is lost in a NATS restart.
type lostAnswerExec struct {
	countingExec
	remember bool
}

func (l *lostAnswerExec) Execute(ctx context.Context, r execute.Request) (execute.Reply, error) {
	l.runs.Add(1)
	if l.remember {
		l.ran = map[string]execute.Reply{r.IdempotencyKey: {OK: true, Result: json.RawMessage(`{"charged":7}`)}}
	}
	return execute.Reply{}, fmt.Errorf("%w: reply lost", execute.ErrUnknown)
}

func TestExecute_lost_answer_is_asked_once_before_outcome_unknown(t *testing.T) {
	tools := execTools{"charge": compiled(t, tool.Definition{Name: "charge"})}
	for _, c := range []struct {
		name     string
		remember bool
		want     call.Status
	}{
		{"executor_remembers_the_call", true, call.Executed},
		{"executor_does_not_know", false, call.OutcomeUnknown},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := redisStore(t)
			ex := &lostAnswerExec{remember: c.remember}
			e := approved("resp-lost-"+c.name, 0, "charge", `{"amount":7}`)
			out, err := newExecute(t, store, ex, tools).Handle(context.Background(), e)
			if err != nil {
				t.Fatal(err)
			}
			if out[0].Status != c.want || ex.runs.Load() != 1 || ex.queries.Load() != 1 {
				t.Fatalf("status %s runs %d queries %d, want %s after one run and one status query", out[0].Status, ex.runs.Load(), ex.queries.Load(), c.want)
			}
			if c.want == call.Executed {
				rec, _, _ := store.Get(context.Background(), idem.Key(e.CallID, e.ToolName, e.Arguments))
				if rec.State != idem.Completed || string(out[0].Result) != `{"charged":7}` {
					t.Fatalf("record %+v result %s, want completed with the executor's answer", rec, out[0].Result)
				}
			}
			// A redelivery never runs the tool again.
			if _, err := newExecute(t, store, ex, tools).Handle(context.Background(), approved("resp-lost-"+c.name, 0, "charge", `{"amount":7}`)); err != nil && c.want == call.Executed {
				t.Fatal(err)
			}
			if ex.runs.Load() != 1 {
				t.Fatalf("runs %d after a redelivery, want 1", ex.runs.Load())
			}
		})
	}
}
