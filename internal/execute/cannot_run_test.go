package execute

import (
	"context"
	"errors"
	"testing"

	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/pkg/wire"
)

// TestCannotRun_tells_refusals_no_retry_can_fix_from_the_rest: a refused
// destination, a signature the tool rejects as invalid, unsigned or
// malformed, and an executor type this stage does not know end the call at
// once; a stale signature (a fresh one may pass) and a tool nobody serves
// yet are retried.
func TestCannotRun_tells_refusals_no_retry_can_fix_from_the_rest(t *testing.T) {
	unknown, err := Selector{}.For(&tool.Compiled{Def: tool.Definition{Name: "x", Executor: tool.Executor{Type: "grpc"}}}).Execute(context.Background(), Request{Tool: "x"})
	if err == nil {
		t.Fatalf("an unknown executor type ran: %+v", unknown)
	}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"destination", sent("POST", "http://127.0.0.1/", false, ErrDestination), true},
		{"invalid signature", refused("s", wire.RefusedInvalid, ""), true},
		{"unsigned", refused("s", wire.RefusedUnsigned, ""), true},
		{"malformed", refused("s", wire.RefusedMalformed, ""), true},
		{"unknown executor type", err, true},
		{"stale signature", refused("s", wire.RefusedStale, ""), false},
		{"no responder", errors.Join(ErrNotRun, errors.New("no executor listens")), false},
		{"unknown outcome", ErrUnknown, false},
	} {
		if got := CannotRun(c.err); got != c.want {
			t.Errorf("%s: CannotRun(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
		if !errors.Is(c.err, ErrNotRun) && c.want {
			t.Errorf("%s: not ErrNotRun", c.name)
		}
	}
}
