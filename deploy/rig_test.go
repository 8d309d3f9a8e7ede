package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/limit"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/stage"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// rig is a producer's and an operator's view of a running pipeline: it
// applies the tools, serves get_weather counting runs per call id, publishes
// responses and counts results per response.
type rig struct {
	t    *testing.T
	js   jetstream.JetStream
	mu   sync.Mutex
	runs map[string]int // executor runs per call id
}

func newRig(t *testing.T, admin, executor *nats.Conn, k trust) *rig {
	t.Helper()
	js, err := jetstream.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, js: js, runs: map[string]int{}}
	data, err := os.ReadFile("../examples/tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defs, err := tool.Load("tools.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range defs { // a limit that never bites, so its metrics are served
		if defs[i].Name == "get_weather" {
			defs[i].Limits = append(defs[i].Limits, limit.Limit{Name: "weather_per_tenant", Window: "1m", Count: 1_000_000})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Apply(ctx, kv, "tools.yaml", defs, false); err != nil {
		t.Fatal(err)
	}
	ts, err := toolserver.New(executor, authz.ExampleGroup, "1.0.0", toolserver.PublicKey(k.signer.Public()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Stop() })
	if err := ts.Handle("get_weather", func(ctx context.Context, c toolserver.Call) (any, error) {
		r.mu.Lock()
		r.runs[c.ID]++
		r.mu.Unlock()
		return map[string]any{"temp_c": 21}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return r
}

// response is an OpenAI chat completion with one get_weather call.
func response(rid string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_%s","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}]}`, rid, rid)
}

// publish sends rid as a producer does, retrying through a leader change
// with the same Nats-Msg-Id (so a retry is never a second response). It
// reports whether JetStream accepted it.
func (r *rig) publish(rid string) bool {
	m := nats.NewMsg(streams.SubjectInResponse)
	m.Data = response(rid)
	m.Header.Set(streams.HeaderProvider, "openai-chat")
	m.Header.Set(streams.HeaderResponseID, rid)
	for range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := r.js.PublishMsg(ctx, m, jetstream.WithMsgID(rid))
		cancel()
		if err == nil {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// resultCounts is the number of results stored per response id.
func (r *rig) resultCounts() (map[string]uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := r.js.Stream(ctx, streams.StreamResults)
	if err != nil {
		return nil, err
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(streams.ResultsAll()))
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for subj, n := range info.State.Subjects {
		out[subj[strings.LastIndex(subj, ".")+1:]] = n
	}
	return out, nil
}

// exactlyOnce waits until every rid has a result and every stage has
// settled, then fails on any rid with more than one result or an executor
// run more than once.
func (r *rig) exactlyOnce(rids []string, within time.Duration) {
	r.t.Helper()
	var (
		counts  map[string]uint64
		missing []string
	)
	deadline := time.Now().Add(within)
	for {
		var err error
		if counts, err = r.resultCounts(); err == nil {
			missing = missing[:0]
			for _, rid := range rids {
				if counts[rid] == 0 {
					missing = append(missing, rid)
				}
			}
			if len(missing) == 0 {
				break
			}
			err = fmt.Errorf("%d of %d calls have no outcome yet", len(missing), len(rids))
		}
		if time.Now().After(deadline) {
			r.explain(missing)
			r.t.Fatalf("condition not met after %v: %v", within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.settled(within) // nothing is left that could still land a late duplicate
	counts, err := r.resultCounts()
	if err != nil {
		r.t.Fatal(err)
	}
	for _, rid := range rids {
		if counts[rid] != 1 {
			r.t.Errorf("%s: %d outcomes, want exactly 1", rid, counts[rid])
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, n := range r.runs {
		if n > 1 {
			r.t.Errorf("call %s ran %d times", id, n)
		}
	}
}

// explain logs what is known of each call that has no outcome: its
// status record, its executor runs, and every consumer's counts, so a
// failure names where the call stopped.
func (r *rig) explain(missing []string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kv, kvErr := r.js.KeyValue(ctx, streams.BucketCalls)
	for i, rid := range missing {
		if i == 10 {
			r.t.Logf("... and %d more", len(missing)-i)
			break
		}
		id := wire.CallID("", rid, 0)
		r.mu.Lock()
		runs := r.runs[id]
		r.mu.Unlock()
		rec := "no status record"
		if kvErr != nil {
			rec = kvErr.Error()
		} else if e, err := kv.Get(ctx, id); err == nil {
			rec = fmt.Sprintf("status record rev %d: %s", e.Revision(), e.Value())
		} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
			rec = err.Error()
		}
		r.t.Logf("%s: %d executor runs; %s", id, runs, rec)
	}
	for name := range r.js.StreamNames(ctx).Name() {
		st, err := r.js.Stream(ctx, name)
		if err != nil {
			r.t.Logf("stream %s: %v", name, err)
			continue
		}
		for c := range st.ListConsumers(ctx).Info() {
			r.t.Logf("%s/%s: pending %d, unacknowledged %d, redelivered %d, waiting %d, delivered %d, paused %v",
				name, c.Name, c.NumPending, c.NumAckPending, c.NumRedelivered, c.NumWaiting, c.Delivered.Stream, c.Paused)
		}
	}
}

// settled waits until every stage's consumer has been delivered all its
// stream holds for it and holds nothing unacknowledged, twice over in
// pipeline order (a stage's output lands before its input is acknowledged,
// and repair feeds parse again): after that no redelivery, and so no late
// duplicate, can come.
func (r *rig) settled(within time.Duration) {
	r.t.Helper()
	testenv.Eventually(r.t, within, 100*time.Millisecond, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for range 2 {
			for _, st := range streams.Names() {
				if err := testenv.ConsumerIdle(ctx, r.js, streams.StreamOf(st), st); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// result is the outcome of rid.
func (r *rig) status(rid string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := r.js.Stream(ctx, streams.StreamResults)
	if err != nil {
		r.t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, streams.ResultsOf(rid))
	if err != nil {
		r.t.Fatal(err)
	}
	var res struct{ Status string }
	_ = json.Unmarshal(m.Data, &res)
	return res.Status
}

// runStages runs each stage in its own stage.Run (as separate Deployments
// would), with opts(stage) as its connection options, until the test ends.
func runStages(t *testing.T, url string, stages []string, skipEnsure bool, settings streams.Settings, k trust, opts func(string) []nats.Option) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, st := range stages {
		ready, done := make(chan struct{}), make(chan error, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			done <- stage.Run(ctx, stage.Config{
				NATSURL: url, NATSOpts: opts(st), Stages: []string{st}, SkipEnsure: skipEnsure, Settings: settings, Seals: k.seals, Exec: stage.ExecConfig{Signer: k.signer},
				Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.ErrorLevel).With().Str("stage", st).Logger(),
			}, ready)
		}()
		select {
		case <-ready:
		case err := <-done:
			t.Fatalf("stage %s stopped at start: %v", st, err)
		case <-time.After(30 * time.Second):
			t.Fatalf("stage %s not ready", st)
		}
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// trust is what `toolgate secrets init` makes for deploy/: every stage's
// seal keys (a keyring for stages run in this process, the directory for
// stage processes, TOOLGATE_SEAL_KEYS) and the execute stage's signing key,
// whose public half the rig's executor verifies with.
type trust struct {
	sealDir string
	seals   *seal.Keyring
	signer  *execute.Signer
}

func trustKeys(t *testing.T) trust {
	t.Helper()
	k := trust{sealDir: t.TempDir()}
	var err error
	if k.seals, err = seal.Ensure(k.sealDir, streams.Names()); err != nil {
		t.Fatal(err)
	}
	if k.signer, err = execute.GenerateSigner(); err != nil {
		t.Fatal(err)
	}
	return k
}
