package pipeline

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/result"
	"github.com/toolgate/toolgate/streams"
)

// The audit event rides in the result (issue 30) and the result still fits
// what NATS can store: the audit's large parts are cut before the tool
// result is, and the audit is never dropped, even from a result that
// cannot fit at all (its cut form carries the audit beside it).
func TestOutputs_the_result_fits_with_its_audit_and_never_drops_it(t *testing.T) {
	errs := func(n, size int) []string {
		var out []string
		for i := range n {
			out = append(out, strings.Repeat(string(rune('a'+i%26)), size))
		}
		return out
	}
	withArgs := func(e call.Envelope, n int) call.Envelope {
		e.RawArguments = `{"blob":"` + strings.Repeat("z", n) + `"}`
		return e
	}
	res := []byte(`{"rows":"` + strings.Repeat("r", 240<<10) + `"}`)
	for _, test := range []struct {
		name  string
		max   int64
		env   func(t *testing.T) call.Envelope
		check func(t *testing.T, e call.Envelope, r Result)
	}{
		{"450 KB of arguments beside a 240 KB tool result: the audit's arguments are cut, the tool result kept whole", 1 << 20,
			func(t *testing.T) call.Envelope {
				return withArgs(terminal(t, "get_weather", call.Executed, res), 450<<10)
			},
			func(t *testing.T, e call.Envelope, r Result) {
				if string(r.Result) != string(res) {
					t.Errorf("the tool result was cut (%d bytes) while the audit's arguments could be", len(r.Result))
				}
				if !strings.Contains(r.Audit.RawArgumentsRedacted, "cut by toolgate: ") || len(r.Audit.RawArgumentsRedacted) > ExcerptMax {
					t.Errorf("the audit's redacted arguments are %d bytes, not cut", len(r.Audit.RawArgumentsRedacted))
				}
			}},
		{"300 errors of 8 KB and 400 KB of arguments: every part bounded, the audit kept", 1 << 20,
			func(t *testing.T) call.Envelope {
				return withArgs(terminal(t, "get_weather", call.ExecutionFailed, nil, errs(300, 8<<10)...), 400<<10)
			},
			func(t *testing.T, e call.Envelope, r Result) {
				if len(r.Audit.Errors) == 0 || r.Audit.FailureType == "" {
					t.Errorf("the audit lost its errors or failure: %d errors, failure %q", len(r.Audit.Errors), r.Audit.FailureType)
				}
			}},
	} {
		t.Run(test.name, func(t *testing.T) {
			e := test.env(t)
			outs, err := withMaxPayload(test.max).Outputs(streams.Execute, e)
			if err != nil {
				t.Fatal(err)
			}
			checkFits(t, outs, test.max)
			r := resultOut(t, outs)
			if r.Audit == nil || r.Audit.RawArgumentsHash != redact.Hash([]byte(e.RawArguments)) || r.Audit.CallID != e.CallID {
				t.Fatalf("the result lost its audit event: %+v", r.Audit)
			}
			test.check(t, e, r)
		})
	}

	// A result that cannot fit even cut (64 KiB max payload, 120 KB of
	// errors): its cut form, and the audit at its smallest beside it.
	e := terminal(t, "get_weather", call.ExecutionFailed, nil, errs(30, 4<<10)...)
	outs, err := withMaxPayload(64<<10).Outputs(streams.Execute, e)
	if err != nil {
		t.Fatal(err)
	}
	checkFits(t, outs, 64<<10)
	for _, o := range outs {
		if !strings.HasPrefix(o.Subject, "toolgate.results.") {
			continue
		}
		var form struct {
			Cut   bool        `json:"truncated_by_toolgate"`
			Audit *AuditEvent `json:"audit"`
		}
		if err := json.Unmarshal(o.Data, &form); err != nil || !form.Cut || !strings.Contains(string(o.Data), result.CutKey) {
			t.Fatalf("want the result's cut form (%v): %.300s", err, o.Data)
		}
		if form.Audit == nil || form.Audit.RawArgumentsHash != redact.Hash([]byte(e.RawArguments)) || len(form.Audit.Errors) != 1 ||
			!strings.Contains(form.Audit.Errors[0], "cut by toolgate: 30 errors") {
			t.Fatalf("the cut result dropped or did not bound its audit: %+v", form.Audit)
		}
		return
	}
	t.Fatal("no result")
}
