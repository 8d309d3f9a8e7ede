package chaos

import (
	"fmt"
	"io"
	"time"
)

// printCluster writes the accounting of every run and, for the cluster
// topology, each fault with its timings.
func (r Report) printCluster(w io.Writer) {
	a := r.Accounting
	fmt.Fprintf(w, "accounting      %d executed outcomes, %d calls the executor ran; ran without an executed outcome: %s; unexplained %d\n",
		a.Executed, a.DistinctRuns, orNone(counts(a.RanNotExec)), a.Unexplained)
	for _, s := range a.Stories {
		fmt.Fprintln(w, "  story         "+s)
	}
	if r.Topology != TopologyCluster {
		return
	}
	fmt.Fprintf(w, "topology        cluster: 3 nats-server (R3 streams and buckets), redis primary + replica + 3 sentinels; %d faults\n", len(r.Faults))
	if len(r.PartitionHops) > 0 {
		hops := map[string]int{}
		for name, n := range r.PartitionHops {
			hops[name] = int(n)
		}
		fmt.Fprintf(w, "partitions      hops (and claimed responses) stored beyond partition 0: %s\n", counts(hops))
	}
	for _, f := range r.Faults {
		rec, first := "-", "none"
		if f.Recovered > 0 {
			rec = f.Recovered.Round(10 * time.Millisecond).String()
		}
		if f.FirstRun >= 0 {
			first = f.FirstRun.Round(10 * time.Millisecond).String()
		}
		fmt.Fprintf(w, "  fault %6.1fs  %-20s %-10s recovered %-8s first executed call after %-8s %s\n",
			f.At.Seconds(), f.Kind, f.Target, rec, first, f.Note)
	}
}
