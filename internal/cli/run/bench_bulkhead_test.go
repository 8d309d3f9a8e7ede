package run

import (
	"strings"
	"testing"
)

// The bulkhead scenarios run alone, on a pipeline of their own: named
// alone they replace the steps, mixed with the cost curve they are refused,
// and the cost curve's names leave the steps as they were.
func TestBench_bulkhead_scenarios_run_alone(t *testing.T) {
	got, only, err := bulkheadPicked("slow-tool, dead-executor")
	if err != nil || !only || len(got) != 2 || got[0].Name != "slow-tool" || got[1].Name != "dead-executor" {
		t.Fatalf("picked %v only %v err %v", got, only, err)
	}
	// The control runs the dead executor's burst against a healthy group.
	got, only, err = bulkheadPicked("dead-executor,healthy-burst")
	if err != nil || !only || len(got) != 2 || !got[1].Control || got[1].Burst != got[0].Burst || got[1].Down != 0 || got[1].Tool == got[0].Tool {
		t.Fatalf("picked %+v only %v err %v, want dead-executor and its control", got, only, err)
	}
	for _, list := range []string{"all", "none", "args-16k,stream-500"} {
		if _, only, err := bulkheadPicked(list); err != nil || only {
			t.Errorf("%q: only %v err %v, want the steps", list, only, err)
		}
	}
	if _, _, err := bulkheadPicked("slow-tool,args-16k"); err == nil || !strings.Contains(err.Error(), "run alone") {
		t.Fatalf("mixed: error %v, want refused", err)
	}
}
