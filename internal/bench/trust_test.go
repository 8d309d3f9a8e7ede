package bench

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
)

func TestSealAll_seals_as_the_stages_do_so_execute_accepts_it(t *testing.T) {
	kr, err := seal.Ephemeral(seal.Sealing())
	if err != nil {
		t.Fatal(err)
	}
	e := call.New("resp-1", 0, time.Unix(1700000000, 0))
	e.ToolName, e.RawArguments, e.Arguments = "create_invoice", `{"amount": 5}`, []byte(`{"amount":5}`)
	if err := sealAll(kr, &e); err != nil {
		t.Fatal(err)
	}
	if checked, err := kr.Verify(&e); err != nil || len(checked) != 5 {
		t.Fatalf("execute's check: %v %v, want 5 seals checked", checked, err)
	}
}

func TestTrustTotals_count_toolgates_work_and_the_executors_apart(t *testing.T) {
	own, exec := TrustTotals([]CoreCost{
		{Name: "parse", CPU: time.Second, InGateTotal: true},
		{Name: "seals", CPU: 3 * time.Microsecond, PerCall: time.Second, Trust: TrustToolgate},
		{Name: "token", CPU: time.Microsecond, Trust: TrustToolgate},
		{Name: "token, first sight", CPU: time.Millisecond},
		{Name: "executor's check", CPU: 50 * time.Microsecond, Trust: TrustExecutor},
	})
	if own != 4*time.Microsecond || exec != 50*time.Microsecond {
		t.Fatalf("own %v, executor %v; want 4µs and 50µs", own, exec)
	}
}
