package gates

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/tool"
)

func TestExecute_seal_checks_come_before_anything_and_run_nothing(t *testing.T) {
	tools := execTools{"charge": compiled(t, tool.Definition{Name: "charge"})}
	for _, c := range []struct {
		name  string
		keys  *seal.Keyring
		e     func() call.Envelope
		stage string
	}{
		{"no keys", nil, func() call.Envelope { return approved("rs1", 0, "charge", `{"amount":5}`) }, seal.Execute},
		{"unsealed", testSeals, func() call.Envelope { return unsealed("rs2", 0, "charge", `{"amount":5}`) }, seal.Accumulate},
		{"edited", testSeals, func() call.Envelope {
			e := approved("rs3", 0, "charge", `{"amount":5}`)
			e.Arguments = json.RawMessage(`{"amount":500}`)
			return e
		}, seal.Parse},
		// A status the state machine would not let execute leave: set
		// directly, never an illegal-transition error.
		{"not approved", testSeals, func() call.Envelope {
			e := approved("rs4", 0, "charge", `{"amount":5}`)
			e.Status = call.OutcomeUnknown
			return e
		}, seal.Policy},
		// Before the tool lookup: an unregistered tool is not even looked up.
		{"unknown tool", testSeals, func() call.Envelope { return unsealed("rs5", 0, "nope", `{}`) }, seal.Accumulate},
	} {
		t.Run(c.name, func(t *testing.T) {
			ex := &countingExec{}
			x := newExecute(t, nil, ex, tools) // no store: a claim would panic
			x.Seals = c.keys
			out, err := x.Handle(context.Background(), c.e())
			if err != nil || len(out) != 1 || out[0].Status != call.SealInvalid {
				t.Fatalf("%v %v, want seal_invalid", out, err)
			}
			last := out[0].History[len(out[0].History)-1]
			if last.Note != seal.Note(c.stage) || !strings.Contains(out[0].Errors[0], "nothing was run") {
				t.Fatalf("note %q errors %q, want the %s seal named", last.Note, out[0].Errors, c.stage)
			}
			if ex.runs.Load() != 0 {
				t.Fatal("the executor was called")
			}
		})
	}
}

func TestExecute_records_the_seals_it_checked(t *testing.T) {
	ex := &countingExec{}
	x := newExecute(t, redisStore(t), ex, execTools{"charge": compiled(t, tool.Definition{Name: "charge"})})
	out, err := x.Handle(context.Background(), approved("rs-ok", 0, "charge", `{"amount":5}`))
	if err != nil || out[0].Status != call.Executed {
		t.Fatalf("%v %v", out, err)
	}
	last := out[0].History[len(out[0].History)-1]
	if last.Stage != "execute" || !strings.Contains(last.Note, "seals checked: accumulate k") || !strings.Contains(last.Note, "policy k") {
		t.Fatalf("execute's step %+v, want the seals checked in its note", last)
	}
}
