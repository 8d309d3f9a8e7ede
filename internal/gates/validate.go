package gates

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/streams"
)

// Validate is the validate gate: the call must name a registered tool and
// its arguments must satisfy that tool's JSON Schema.
type Validate struct {
	Tools Tools
	Now   Clock
}

// Handle implements pipeline.Gate.
func (v *Validate) Handle(ctx context.Context, e call.Envelope) ([]call.Envelope, error) {
	t, ok := v.Tools.Lookup(e.ToolName)
	if !ok {
		e.ValidTools = v.Tools.Names()
		msg := fmt.Sprintf("there is no tool named %q", e.ToolName)
		if err := e.Move(streams.Validate, call.NoSuchTool, v.Now(), msg); err != nil {
			return nil, err
		}
		return []call.Envelope{e}, nil
	}
	e.ToolRevision = t.Revision
	doc, err := decode(e.Arguments)
	if err != nil {
		return nil, err
	}
	var errs []string
	for _, p := range t.Schema.Validate(doc) {
		errs = append(errs, p.String())
	}
	to := call.Validated
	if len(errs) > 0 {
		to = call.SchemaInvalid
	}
	if err := e.Move(streams.Validate, to, v.Now(), errs...); err != nil {
		return nil, err
	}
	return []call.Envelope{e}, nil
}

// decode reads canonical arguments with exact numbers.
func decode(args json.RawMessage) (map[string]any, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("gates: parsed arguments do not decode: %w", err)
	}
	return m, nil
}
