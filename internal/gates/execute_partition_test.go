package gates

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/idem"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"
)

// partitionExec is countingExec noting the replay partition each request
// and each status query names.
type partitionExec struct {
	countingExec
	mu            sync.Mutex
	sent, asked   []int
	loseTheAnswer bool
}

func (p *partitionExec) Execute(ctx context.Context, r execute.Request) (execute.Reply, error) {
	p.mu.Lock()
	p.sent = append(p.sent, r.ReplayPartition)
	p.mu.Unlock()
	rep, err := p.countingExec.Execute(ctx, r)
	if p.loseTheAnswer {
		return execute.Reply{}, execute.ErrUnknown
	}
	return rep, err
}

func (p *partitionExec) Status(ctx context.Context, r execute.Request) (execute.StatusReply, error) {
	p.mu.Lock()
	p.asked = append(p.asked, r.ReplayPartition)
	p.mu.Unlock()
	return p.countingExec.Status(ctx, r)
}

// inPartition is an approved call of tenant acme whose partition of P is
// not 0.
func inPartition(t *testing.T, p int) (call.Envelope, int) {
	t.Helper()
	for i := range 100 {
		e := unsealed("resp-part-"+strconv.Itoa(i), 0, "charge", `{"amount":3}`)
		e.Request.Tenant = "acme"
		e = sealed(e)
		if k := streams.Partition("acme", e.ResponseID, p); k > 0 {
			return e, k
		}
	}
	t.Fatal("no response id in a partition but 0")
	return call.Envelope{}, 0
}

// With P = 3 the request names the call's partition (its execute
// stream's), the claim records it, and the status query after a lost
// answer asks there; with P = 1 none is named.
func TestExecute_names_the_calls_replay_partition(t *testing.T) {
	tools := execTools{"charge": compiled(t, tool.Definition{Name: "charge"})}
	store := redisStore(t)
	e, k := inPartition(t, 3)
	ex := &partitionExec{loseTheAnswer: true}
	x := newExecute(t, store, ex, tools)
	x.Partitions = 3
	out, err := x.Handle(context.Background(), e)
	if err != nil || out[0].Status != call.Executed {
		t.Fatalf("%v %v, want executed (reconciled after the lost answer)", out, err)
	}
	if len(ex.sent) != 1 || ex.sent[0] != k || len(ex.asked) != 1 || ex.asked[0] != k {
		t.Fatalf("sent in partitions %v, asked in %v; want [%d] and [%d]", ex.sent, ex.asked, k, k)
	}
	rec, _, _ := store.Get(context.Background(), idem.Key(e.CallID, e.ToolName, e.Arguments))
	if rec.ReplayPartition != k {
		t.Fatalf("the claim records partition %d, want %d", rec.ReplayPartition, k)
	}
	one := &partitionExec{}
	x1 := newExecute(t, redisStore(t), one, tools)
	x1.Partitions = 1
	if _, err := x1.Handle(context.Background(), e); err != nil || len(one.sent) != 1 || one.sent[0] != 0 {
		t.Fatalf("P = 1: sent in partitions %v (%v), want [0]", one.sent, err)
	}
	// The claim of partition 0 is stored as before partitions: no new member.
	if b, _ := json.Marshal(idem.Record{Key: "k", ReplayPartition: 0}); strings.Contains(string(b), "replay_partition") {
		t.Fatalf("a partition 0 claim is stored as %s", b)
	}
}

// A claim made under P = 3 whose lease ran out is reconciled by a process
// running with P = 1 in the partition the claim's request named, not in
// today's partition of the call.
func TestExecute_reconciles_in_the_partition_the_claim_named(t *testing.T) {
	tools := execTools{"charge": compiled(t, tool.Definition{Name: "charge"})}
	store := redisStore(t)
	e, k := inPartition(t, 3)
	key := idem.Key(e.CallID, e.ToolName, e.Arguments)
	rec := idem.Record{Key: key, CallID: e.CallID, Tool: e.ToolName, Fingerprint: idem.Fingerprint(e.ToolName, e.Arguments),
		Owner: "killed-worker", LeaseUntil: time.Now().Add(-time.Second), ClaimedAt: time.Now().Add(-time.Minute), ReplayPartition: k}
	if _, claimed, err := store.Claim(context.Background(), rec, time.Hour); err != nil || !claimed {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	ex := &partitionExec{}
	ex.ran = map[string]execute.Reply{key: {OK: true, Result: json.RawMessage(`{"charged":3}`)}}
	x := newExecute(t, store, ex, tools)
	x.Partitions = 1
	out, err := x.Handle(context.Background(), e)
	if err != nil || out[0].Status != call.Executed || ex.runs.Load() != 0 {
		t.Fatalf("%v %v (ran %d), want executed from the status query", out, err, ex.runs.Load())
	}
	if len(ex.asked) != 1 || ex.asked[0] != k {
		t.Fatalf("asked in partitions %v, want [%d]", ex.asked, k)
	}
}
