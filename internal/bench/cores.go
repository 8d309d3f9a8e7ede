package bench

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/gates"
	"github.com/toolgate/toolgate/internal/parse"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/tool"
)

// CoreCost is one pure core's cost per valid call, from testing.Benchmark
// in this process (no broker, no envelope encoding).
type CoreCost struct {
	Name    string        `json:"name"`
	What    string        `json:"what"`
	PerCall time.Duration `json:"ns_per_call"`
	// CPU is the process's CPU time per call over the measured loop (GC
	// included): what a call costs, where PerCall (wall time) also counts
	// the time other processes of a loaded machine held the core. The
	// gates' and trust totals are sums of CPU.
	CPU         time.Duration `json:"cpu_ns_per_call"`
	AllocsPer   int64         `json:"allocs_per_call"`
	BytesPer    int64         `json:"bytes_per_call"`
	InGateTotal bool          `json:"in_gate_total"`
	// Trust: whose trust work this is (trust.go): TrustToolgate, counted
	// in toolgate's trust per call; TrustExecutor, printed apart; "" for
	// the gates' work and a trust figure not counted per call.
	Trust string `json:"trust,omitempty"`
}

// Cores measures, on one valid OpenAI chat create_invoice call (the mix's
// valid call, principal bob with role billing), what accumulate's decode
// and the parse, validate, business and policy gates cost: the exported
// functions the packages' own benchmarks call (provider.ParseResponse;
// gates.Parse, Validate, Business and Policy Handle, as
// BenchmarkGates_validate_business_policy runs them). GateTotal is the four
// gates together — the goal's figure; the decode is beside it.
func Cores(defs []tool.Definition) (cores []CoreCost, gateTotal time.Duration, err error) {
	tools := toolSet{}
	for i, d := range defs {
		c, err := tool.Compile(d, uint64(i+1))
		if err != nil {
			return nil, 0, err
		}
		tools[d.Name] = c
	}
	now := func() time.Time { return time.Unix(1700000000, 0) }
	body := Mix()[0].Body("resp-bench", 3)
	resp, err := provider.ParseResponse("openai-chat", body)
	if err != nil || len(resp.Calls) != 1 {
		return nil, 0, fmt.Errorf("bench: cores: the valid call does not decode: %v", err)
	}
	in := call.New("resp-bench", 0, now())
	c := resp.Calls[0]
	in.Provider, in.ProviderCallID, in.ToolName, in.RawArguments = resp.Provider, c.ID, c.Name, c.Arguments
	in.FinishReason, in.ProviderFinish = string(resp.Finish), resp.ProviderFinish
	in.Batch = call.Batch{ID: in.ResponseID, Size: 1}
	in.Request = call.Request{Principal: "bob", Roles: []string{"billing"}}
	ctx := context.Background()
	type gate struct {
		name   string
		handle func(context.Context, call.Envelope) ([]call.Envelope, error)
	}
	chain := []gate{
		{"parse", (&gates.Parse{Tools: tools, Limits: parse.DefaultLimits(), Now: now}).Handle},
		{"validate", (&gates.Validate{Tools: tools, Now: now}).Handle},
		{"business", (&gates.Business{Tools: tools, Now: now}).Handle},
		{"policy", (&gates.Policy{Tools: tools, Now: now}).Handle},
	}
	dec, err := measure("accumulate decode", "provider.ParseResponse(openai-chat) of the whole response", false, func() error {
		_, err := provider.ParseResponse("openai-chat", body)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	cores = append(cores, dec)
	e := in
	for _, g := range chain {
		input := e
		outs, err := g.handle(ctx, input)
		if err != nil || len(outs) != 1 {
			return nil, 0, fmt.Errorf("bench: cores: %s: %v", g.name, err)
		}
		e = outs[0]
		cc, err := measure(g.name, "gates."+gateType(g.name)+".Handle", true, func() error {
			_, err := g.handle(ctx, input)
			return err
		})
		if err != nil {
			return nil, 0, err
		}
		cores = append(cores, cc)
	}
	if e.Status != call.Approved {
		return nil, 0, fmt.Errorf("bench: cores: the valid call ended %s, want %s: %v", e.Status, call.Approved, e.Errors)
	}
	for _, c := range cores {
		if c.InGateTotal {
			gateTotal += c.CPU
		}
	}
	trust, err := trustCores(e)
	if err != nil {
		return nil, 0, fmt.Errorf("bench: cores: trust: %w", err)
	}
	return append(cores, trust...), gateTotal, nil
}

func measure(name, what string, inTotal bool, f func() error) (CoreCost, error) {
	var ferr error
	var cpu time.Duration
	var n int
	r := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		// The last run is the one testing.Benchmark reports: its CPU.
		n = 0
		c0 := Self().CPU
		for b.Loop() {
			n++
			if err := f(); err != nil {
				ferr = err
				b.FailNow()
			}
		}
		cpu = Self().CPU - c0
	})
	if ferr != nil || r.N == 0 || n == 0 {
		return CoreCost{}, fmt.Errorf("bench: cores: %s: %v", name, ferr)
	}
	return CoreCost{Name: name, What: what, InGateTotal: inTotal, PerCall: time.Duration(r.NsPerOp()),
		CPU: cpu / time.Duration(n), AllocsPer: r.AllocsPerOp(), BytesPer: r.AllocedBytesPerOp()}, nil
}

func gateType(name string) string {
	return map[string]string{"parse": "Parse", "validate": "Validate", "business": "Business", "policy": "Policy"}[name]
}

// toolSet is the compiled tools as gates.Tools, as the registry serves them.
type toolSet map[string]*tool.Compiled

func (s toolSet) Lookup(name string) (*tool.Compiled, bool) { c, ok := s[name]; return c, ok }

func (s toolSet) Names() []string {
	n := make([]string, 0, len(s))
	for k := range s {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
