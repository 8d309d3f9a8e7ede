package chaos

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// Executor is the harness's tool: it serves every toolgate.exec.<tool>,
// counts each execution request per call id WITHOUT de-duplicating (so a
// call toolgate sent twice shows as 2), answers {"ok": true}, and answers
// status queries (Toolgate-Query: status) from its own record of the
// idempotency keys it ran, as a tool that stores its keys would.
type Executor struct {
	mu      sync.Mutex
	runs    map[string]int            // call id -> execution requests received
	byKey   map[string]wire.ExecReply // idempotency key -> the answer given
	queries int
	flight  int                  // execution requests being answered
	times   []time.Time          // when each execution request arrived, in order
	first   map[string]time.Time // call id -> when its first execution request arrived
	nc      *nats.Conn
	sub     *nats.Subscription // nil while stopped (executor_down.go)
	delay   time.Duration
}

// NewExecutor subscribes on toolgate.exec.> over nc. Each execution takes
// delay (in its own goroutine), so a killed execute process is often caught
// mid-call: the tool ran, toolgate never heard the answer.
func NewExecutor(nc *nats.Conn, delay time.Duration) (*Executor, error) {
	x := &Executor{runs: map[string]int{}, byKey: map[string]wire.ExecReply{}, first: map[string]time.Time{}, nc: nc, delay: delay}
	if err := x.Start(); err != nil {
		return nil, err
	}
	return x, nil
}

func (x *Executor) serve(m *nats.Msg) {
	key, id := m.Header.Get(streams.HeaderIdemKey), m.Header.Get(streams.HeaderCallID)
	if q := m.Header.Get(wire.HeaderQuery); q != "" {
		x.mu.Lock()
		x.queries++
		rep, ok := x.byKey[key]
		x.mu.Unlock()
		st := wire.ExecStatusReply{Known: ok, OK: rep.OK, Result: rep.Result, Error: rep.Error}
		body, _ := json.Marshal(st)
		_ = m.Respond(body)
		return
	}
	x.mu.Lock()
	x.runs[id]++
	now := time.Now()
	x.times = append(x.times, now)
	if _, ok := x.first[id]; !ok {
		x.first[id] = now
	}
	n := x.runs[id]
	rep := wire.ExecReply{OK: true, Result: json.RawMessage(fmt.Sprintf(`{"call":%q,"run":%d}`, id, n))}
	if _, ok := x.byKey[key]; !ok {
		x.byKey[key] = rep
	}
	x.flight++
	x.mu.Unlock()
	time.Sleep(x.delay)
	body, _ := json.Marshal(rep)
	_ = m.Respond(body)
	x.mu.Lock()
	x.flight--
	x.mu.Unlock()
}

// InFlight is how many execution requests the executor is answering: the
// tool ran, and toolgate has not heard the answer yet.
func (x *Executor) InFlight() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.flight
}

// Runs returns a copy of the execution requests per call id.
func (x *Executor) Runs() map[string]int {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make(map[string]int, len(x.runs))
	for k, v := range x.runs {
		out[k] = v
	}
	return out
}

// Queries is how many status queries were asked.
func (x *Executor) Queries() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.queries
}

// Close unsubscribes.
func (x *Executor) Close() { x.Stop() }

// FirstRuns returns a copy of when each call's first execution request
// arrived.
func (x *Executor) FirstRuns() map[string]time.Time {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make(map[string]time.Time, len(x.first))
	for k, v := range x.first {
		out[k] = v
	}
	return out
}

// FirstRunAfter is when the first execution request after t arrived; false
// when none has.
func (x *Executor) FirstRunAfter(t time.Time) (time.Time, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	i := sort.Search(len(x.times), func(i int) bool { return x.times[i].After(t) })
	if i == len(x.times) {
		return time.Time{}, false
	}
	return x.times[i], true
}
