package shadow

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/gates"
	"github.com/toolgate/toolgate/internal/tool"
)

// liveTools are compiled definitions as the live gates look them up.
type liveTools map[string]*tool.Compiled

func (l liveTools) Lookup(n string) (*tool.Compiled, bool) { c, ok := l[n]; return c, ok }
func (l liveTools) Names() []string                        { return nil }

func compiledLive(t testing.TB, yaml string) liveTools {
	t.Helper()
	out := liveTools{}
	defs, err := tool.Load("t.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range defs {
		c, err := tool.Compile(d, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		out[d.Name] = c
	}
	return out
}

// strict is live with a schema that refuses a city over 4 characters.
const strict = `
tools:
  - name: get_weather
    input_schema: {type: object, properties: {city: {type: string, maxLength: 4}}, required: [city]}
    policy: {risk: read}
`

// parsed is a call as the validate gate receives it.
func parsed(t testing.TB, args string) call.Envelope {
	e := call.New("r1", 0, time.Now())
	e.ToolName, e.RawArguments, e.Arguments = "get_weather", args, []byte(args)
	if err := e.Move("parse", call.Parsed, time.Now()); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestWrap_at_validate_counts_the_calls_it_stops_once: the live validate
// gate's refusal is compared with the shadow's verdict; a call it passes on
// is left to the next gate, and a call back from repair is not counted
// again.
func TestWrap_at_validate_counts_the_calls_it_stops_once(t *testing.T) {
	a, err := compile(Revision{ID: "s1", Tools: load(t, live)})
	if err != nil {
		t.Fatal(err)
	}
	c := &Comparer{Tally: &Tally{}, log: zerolog.Nop(), now: time.Now}
	c.arm(a)
	h := c.Wrap((&gates.Validate{Tools: compiledLive(t, strict), Now: time.Now}).Handle)
	ctx := context.Background()
	if outs, err := h(ctx, parsed(t, `{"city":"Oslo"}`)); err != nil || outs[0].Status != call.Validated {
		t.Fatalf("Oslo: %v %v", outs, err)
	}
	if d := c.Tally.take(); d != nil {
		t.Fatalf("a call validate passed on was counted at validate: %+v", d["get_weather"])
	}
	outs, err := h(ctx, parsed(t, `{"city":"Lisbon"}`))
	if err != nil || outs[0].Status != call.SchemaInvalid {
		t.Fatalf("Lisbon: %v %v", outs, err)
	}
	r := c.Tally.take()["get_weather"]
	if r == nil || r.Seen != 1 || len(r.Changes) != 1 || r.Changes[0].Was != "rejected: schema_invalid" || r.Changes[0].Would != "would pass" {
		t.Fatalf("record %+v", r)
	}
	// Repaired, it comes back to validate (through parse) with its
	// refusal in its history.
	back := outs[0]
	for _, s := range []call.Status{call.Repairing, call.Received, call.Parsed} {
		if err := back.Move("repair", s, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h(ctx, back); err != nil {
		t.Fatal(err)
	}
	if d := c.Tally.take(); d != nil {
		t.Fatalf("a call back from repair was counted again: %+v", d["get_weather"])
	}
}

// BenchmarkWrap_validate is what the validate gate pays per call for the
// shadow: unwrapped (as before), wrapped with no shadow applied, wrapped
// with one that names the tool (a call it stops is compared).
func BenchmarkWrap_validate(b *testing.B) {
	g := (&gates.Validate{Tools: compiledLive(b, strict), Now: time.Now}).Handle
	ok, refused := parsed(b, `{"city":"Oslo"}`), parsed(b, `{"city":"Lisbon"}`)
	armedC := &Comparer{Tally: &Tally{}, log: zerolog.Nop(), now: time.Now}
	a, err := compile(Revision{ID: "s1", Tools: load(&testing.T{}, live)})
	if err != nil {
		b.Fatal(err)
	}
	armedC.arm(a)
	none := &Comparer{Tally: &Tally{}, log: zerolog.Nop(), now: time.Now}
	for _, bc := range []struct {
		name string
		h    Gate
		in   call.Envelope
	}{
		{"unwrapped/passed", g, ok},
		{"no_shadow/passed", none.Wrap(g), ok},
		{"unwrapped/refused", g, refused},
		{"no_shadow/refused", none.Wrap(g), refused},
		{"shadow/refused", armedC.Wrap(g), refused},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.h(context.Background(), bc.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
