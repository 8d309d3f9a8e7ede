package pipetest

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/pkg/toolserver"
)

// Serve serves the example tools as the example executor group's user,
// answering each call with fn, until cleanup.
func (p *Pipe) Serve(t *testing.T, fn func(tool string, c toolserver.Call) (any, error)) {
	t.Helper()
	nc, _ := p.Connect(t, authz.Executor)
	ts, err := toolserver.New(nc, authz.ExampleGroup, "1.0.0", toolserver.PublicKey(p.Signer.Public()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Stop() })
	for _, name := range authz.ExampleTools() {
		if err := ts.Handle(name, func(_ context.Context, c toolserver.Call) (any, error) { return fn(name, c) }); err != nil {
			t.Fatal(err)
		}
	}
}
