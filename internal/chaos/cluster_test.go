package chaos

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/streams"
)

// The short cluster chaos run: 300 calls through three nats-server
// processes (R3 streams and buckets), a Redis primary with a replica and
// three sentinels, and nine stage processes (two of accumulate and
// execute), while every stage is SIGKILLed at least once and each cluster
// fault happens once: a NATS node paused, a stage restarted onto a backlog,
// the Redis primary SIGKILLed (Sentinel promotes the replica), the gates
// stream leader's node SIGKILLed (a new leader is elected), the executor
// stopped for 5 s (under execute's retry budget). The gate streams have P
// = 2 partitions, so each stage's hops go through two streams with leaders
// of their own and every reader sums over both. No call is lost or
// executed twice, and every run of the executor is accounted for.
func TestRunCluster_failovers_lose_and_double_no_call(t *testing.T) {
	dir := t.TempDir()
	var log strings.Builder
	begin := time.Now()
	rep, err := Run(context.Background(), Config{
		Topology: TopologyCluster, Bins: testBins(t),
		Calls: 300, Rate: 20, KillEvery: 1500 * time.Millisecond, AckWait: 3 * time.Second,
		Settle: 3 * time.Minute, ReplayWait: time.Minute, Dir: dir, Log: &log,
		ExecutorDown: 5 * time.Second, RSSEvery: time.Second, RSSAfter: 2 * time.Second,
		Partitions: 2,
	})
	var out strings.Builder
	rep.Print(&out)
	t.Logf("%v\n%s\n%s", time.Since(begin).Round(time.Second), log.String(), out.String())
	if err != nil {
		dumpLogs(t, dir)
		t.Fatal(err)
	}
	if !rep.OK() {
		dumpLogs(t, dir)
		t.Fatalf("cluster chaos run found %d violations (see the figures above)", len(rep.Violations)+len(rep.Replay.Violations)+len(rep.Accounting.Violations))
	}
	kinds := map[string]Fault{}
	for _, f := range rep.Faults {
		kinds[f.Kind] = f
	}
	for _, k := range []string{FaultKillStage, FaultKillLeader, FaultKillPrimary, FaultPauseNATS, FaultBacklogStage, FaultExecutorDown} {
		if _, ok := kinds[k]; !ok {
			t.Errorf("no %s fault in the run", k)
		}
	}
	if rep.NATSRestarts != 1 || rep.RedisRestart != 1 {
		t.Errorf("%d NATS node and %d Redis restarts, want one each", rep.NATSRestarts, rep.RedisRestart)
	}
	for _, st := range streams.Names() {
		if rep.Kills[st] == 0 {
			t.Errorf("stage %s was never killed", st)
		}
	}
	if f := kinds[FaultKillLeader]; f.Recovered <= 0 || f.FirstRun < 0 {
		t.Errorf("stream leader killed: new leader after %v, first executed call after %v; want both", f.Recovered, f.FirstRun)
	}
	if f := kinds[FaultKillPrimary]; f.Recovered <= 0 || f.FirstRun < 0 {
		t.Errorf("redis primary killed: promoted after %v, first executed call after %v; want both", f.Recovered, f.FirstRun)
	}
	if e := rep.ExecDown; e == nil || e.Down < 5*time.Second || e.Waited == 0 || e.WaitMax < 2*time.Second || e.FirstRun < 0 || e.CircuitOpened < 0 {
		t.Errorf("executor down: %+v; want 5s down, calls that waited seconds for it, a first executed call after it came back, and a group's circuit seen open (issue 38)", e)
	}
	checkRSS(t, rep, 9)
	a := rep.Accounting
	if a.DistinctRuns != a.Executed+sum(a.RanNotExec) || a.Unexplained != 0 {
		t.Errorf("accounting: %d executed, %d runs, %v ran otherwise, %d unexplained", a.Executed, a.DistinctRuns, a.RanNotExec, a.Unexplained)
	}
	for _, st := range []string{streams.Parse, streams.Validate, streams.Execute} { // every call passes them
		if name := streams.PartitionStream(st, 1); rep.PartitionHops[name] == 0 {
			t.Errorf("no hop went through %s (partitions %v)", name, rep.PartitionHops)
		}
	}
	if name := streams.ResponsesStream(1); rep.PartitionHops[name] == 0 { // the claimed path's partition 1, mapped by the servers
		t.Errorf("no claimed response went through %s (partitions %v)", name, rep.PartitionHops)
	}
	if name := streams.InputStream(streams.BatchPartition(ChaosTenant, 2)); rep.PartitionHops[name] == 0 { // the batch path's partition, mapped by the servers
		t.Errorf("no batch response went through %s (partitions %v)", name, rep.PartitionHops)
	}
	if rep.Accepted < 290 || rep.Executed == 0 {
		t.Fatalf("accepted %d, executed %d: the mix did not flow", rep.Accepted, rep.Executed)
	}
}
