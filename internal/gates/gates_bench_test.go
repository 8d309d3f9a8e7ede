package gates

import (
	"context"
	"encoding/json"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/tool"
)

// toolSet is an in-memory Tools built with tool.Compile, as the registry
// builds it from the bucket.
type toolSet map[string]*tool.Compiled

func (s toolSet) Lookup(name string) (*tool.Compiled, bool) { c, ok := s[name]; return c, ok }

func (s toolSet) Names() []string {
	var n []string
	for k := range s {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func exampleTools(b *testing.B) toolSet {
	b.Helper()
	data, err := os.ReadFile("../../examples/tools.yaml")
	if err != nil {
		b.Fatal(err)
	}
	defs, err := tool.Load("tools.yaml", data)
	if err != nil {
		b.Fatal(err)
	}
	s := toolSet{}
	for i, d := range defs {
		c, err := tool.Compile(d, uint64(i+1))
		if err != nil {
			b.Fatal(err)
		}
		s[d.Name] = c
	}
	return s
}

// BenchmarkGates_validate_business_policy runs one create_invoice call
// through the validate, business and policy gates' Handle methods, as the
// three stages do (without the broker hops between them).
func BenchmarkGates_validate_business_policy(b *testing.B) {
	tools := exampleTools(b)
	now := func() time.Time { return time.Unix(1700000000, 0) }
	v, bu, p := &Validate{Tools: tools, Now: now}, &Business{Tools: tools, Now: now}, &Policy{Tools: tools, Now: now}
	ctx := context.Background()
	for _, c := range []struct {
		name, args string
		want       call.Status
	}{
		{"valid", `{"customer_id":"cus_9821","currency":"USD","line_items":[{"sku":"PRO-SEAT","quantity":3,"price_cents":4900},{"sku":"SUPPORT","quantity":1,"price_cents":19900}]}`, call.Approved},
		{"schema_invalid", `{"customer_id":"cus_9821","currency":"YEN","line_items":[{"sku":"PRO-SEAT","quantity":0,"price_cents":4900}]}`, call.SchemaInvalid},
		{"business_invalid", `{"customer_id":"TODO","currency":"USD","line_items":[{"sku":"PRO-SEAT","quantity":3,"price_cents":0}]}`, call.BusinessInvalid},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := call.New("resp-bench", 0, now())
			e.ToolName, e.Status = "create_invoice", call.Parsed
			e.RawArguments, e.Arguments = c.args, json.RawMessage(c.args)
			e.Request = call.Request{Principal: "bob", Roles: []string{"billing"}}
			b.ReportAllocs()
			for b.Loop() {
				out := []call.Envelope{e}
				var err error
				for _, g := range []func(context.Context, call.Envelope) ([]call.Envelope, error){v.Handle, bu.Handle, p.Handle} {
					if out[0].Status == c.want {
						break
					}
					if out, err = g(ctx, out[0]); err != nil {
						b.Fatal(err)
					}
				}
				if out[0].Status != c.want {
					b.Fatalf("ended %s, want %s: %v", out[0].Status, c.want, out[0].Errors)
				}
			}
		})
	}
}
