package pipeline

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
)

// BenchmarkOutputs_hop and _terminal measure what every gate pays to turn an
// envelope into its publishes: a hop to the next stage, and a terminal
// outcome (result, audit, status record).
func BenchmarkOutputs(b *testing.B) {
	now := time.Now()
	e := call.New("bench-resp", 0, now)
	e.ToolName, e.Provider = "create_invoice", "openai-chat"
	e.RawArguments = `{"customer_id":"cus_9821","currency":"USD","line_items":[{"sku":"PRO-SEAT","quantity":3,"price_cents":4900}]}`
	e.Arguments = json.RawMessage(e.RawArguments)
	for _, st := range []call.Status{call.Parsed, call.Validated, call.BusinessValid, call.Approved} {
		if err := e.Move("bench", st, now); err != nil {
			b.Fatal(err)
		}
	}
	hop := e
	hop.Status = call.Validated
	done := e
	if err := done.Move("execute", call.Executed, now); err != nil {
		b.Fatal(err)
	}
	done.Result = json.RawMessage(`{"invoice_id":"inv_1"}`)
	em := &Emitter{}
	for _, c := range []struct {
		name string
		e    call.Envelope
	}{{"hop", hop}, {"terminal", done}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := em.Outputs("bench", c.e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
