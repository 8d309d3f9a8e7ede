package stage

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/streams"
)

// execRig is an embedded NATS server, a real redis-server, the tool
// "charge" (executor timeout 1s) served by toolserver, and counters of what
// reached the tool. Execute stages run as separate OS processes or
// in-process; approved calls are published straight to the execute gate.
type execRig struct {
	*pipe
	srv      *server.Server
	rds      *testenv.Redis
	ackWait  time.Duration
	effects  atomic.Int32 // side effects: the tool's function ran
	requests atomic.Int32 // execution requests toolgate sent (before any dedup)
	queries  atomic.Int32 // status queries toolgate sent
	mu       sync.Mutex
	perCall  map[string]int // execution requests per call id
	sealDir  string         // the gate seal keys, for execute processes
	seals    *seal.Keyring  // the same keys: publishApproved seals with them
}

const chargeTool = `
tools:
  - name: charge
    description: Charges a customer. Not idempotent by itself.
    input_schema: {type: object, properties: {amount: {type: integer}}, required: [amount]}
    executor: {timeout: 1s}
    policy: {risk: write}
`

// newExecRig starts everything but the execute stage; fn is the tool.
func newExecRig(t *testing.T, fn func(n int32, c toolserver.Call) (any, error)) *execRig {
	t.Helper()
	return newExecRigTools(t, chargeTool, fn)
}

// newExecRigTools is newExecRig with the tools file toolsYAML, which
// defines the tool "charge".
func newExecRigTools(t *testing.T, toolsYAML string, fn func(n int32, c toolserver.Call) (any, error)) *execRig {
	t.Helper()
	srv := testenv.RunJetStream(t)
	nc, js := testenv.Connect(t, srv)
	r := &execRig{pipe: &pipe{t: t, nc: nc, js: js, ctx: context.Background()}, srv: srv, rds: testenv.RunRedis(t), ackWait: 2 * time.Second, perCall: map[string]int{}}
	r.sealDir, r.seals = sealtest.Dir(t)
	if err := streams.Ensure(r.ctx, js, testSettings(r.ackWait)); err != nil {
		t.Fatal(err)
	}
	defs, err := tool.Load("charge.yaml", []byte(toolsYAML))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(r.ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Apply(r.ctx, kv, "charge.yaml", defs, false); err != nil {
		t.Fatal(err)
	}
	// Count every request on the tool's subject, as sent, before the
	// toolserver's own de-duplication.
	sub, err := nc.Subscribe(streams.Exec("charge"), func(m *nats.Msg) {
		if m.Header.Get(execute.HeaderQuery) != "" {
			r.queries.Add(1)
			return
		}
		r.requests.Add(1)
		r.mu.Lock()
		r.perCall[m.Header.Get(streams.HeaderCallID)]++
		r.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	tnc, _ := testenv.Connect(t, srv) // the tool's own connection
	ts, err := toolserver.New(tnc, "charge-tool", "1.0.0", testExecKey())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Stop() })
	if err := ts.Handle("charge", func(ctx context.Context, c toolserver.Call) (any, error) {
		return fn(r.effects.Add(1), c)
	}); err != nil {
		t.Fatal(err)
	}
	return r
}

// startProcess runs the execute stage as its own OS process (this test
// binary, see TestMain) and returns once it consumes. env is added to its
// environment last (TOOLGATE_REDIS_URL= runs it on the embedded store).
func (r *execRig) startProcess(env ...string) *exec.Cmd {
	r.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), envExecuteProcess+"=1", "TOOLGATE_NATS_URL="+r.srv.ClientURL(),
		"TOOLGATE_REDIS_URL="+r.rds.URL(), "TOOLGATE_TEST_ACK_WAIT="+r.ackWait.String(), "TOOLGATE_SEAL_KEYS="+r.sealDir), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "READY" {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		r.t.Fatal("execute process not ready")
	}
	return cmd
}

// startInProcess runs the execute stage in this process until the test ends.
func (r *execRig) startInProcess() {
	r.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		done <- Run(ctx, Config{NATSURL: r.srv.ClientURL(), RedisURL: r.rds.URL(), Stages: []string{streams.Execute},
			Settings: testSettings(r.ackWait), SealKeys: r.sealDir, Exec: ExecConfig{Signer: testExecSigner()}, Log: zerolog.New(zerolog.NewTestWriter(r.t)).Level(zerolog.ErrorLevel)}, ready)
	}()
	select {
	case <-ready:
	case err := <-done:
		r.t.Fatalf("execute stopped: %v", err)
	case <-time.After(20 * time.Second):
		r.t.Fatal("execute not ready")
	}
	r.t.Cleanup(func() {
		cancel()
		<-done
	})
}

// approvedCall is what the policy gate hands to execute.
func approvedCall(rid string, index int, args string) call.Envelope {
	e := call.New(rid, index, time.Now())
	e.Provider, e.ProviderCallID, e.ToolName = "openai-chat", fmt.Sprintf("call_%s_%d", rid, index), "charge"
	e.RawArguments, e.Arguments = args, json.RawMessage(args)
	for _, st := range []call.Status{call.Parsed, call.Validated, call.BusinessValid, call.Approved} {
		if err := e.Move("test", st, time.Now()); err != nil {
			panic(err)
		}
	}
	return e
}

// publishApproved hands e to the execute gate with message id msgID,
// sealed as the gates would have.
func (r *execRig) publishApproved(e call.Envelope, msgID string) {
	r.t.Helper()
	sealtest.Through(r.t, r.seals, &e)
	body, err := e.Marshal()
	if err != nil {
		r.t.Fatal(err)
	}
	m := nats.NewMsg(streams.Gate(streams.Execute))
	m.Data = body
	m.Header.Set(nats.MsgIdHdr, msgID)
	if _, err := r.js.PublishMsg(r.ctx, m); err != nil {
		r.t.Fatal(err)
	}
}

// settled waits until the execute consumer has nothing pending or unacked.
func (r *execRig) settled(total time.Duration) {
	r.t.Helper()
	testenv.Eventually(r.t, total, 50*time.Millisecond, func() error {
		return testenv.ConsumerIdle(r.ctx, r.js, streams.StreamGates, streams.Execute)
	})
}

// byCall groups the results of rid by call id.
func (r *execRig) byCall(rid string) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, res := range r.results(rid) {
		id, _ := res["call_id"].(string)
		out[id] = append(out[id], res)
	}
	return out
}
