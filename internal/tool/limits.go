package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/toolgate/toolgate/internal/limit"
)

// compileLimits compiles a tool's limits; an error names the field:
// "limits[1].window: ...". A limit named twice is refused.
func (tc *Compiler) compileLimits(ls []limit.Limit) ([]*limit.Compiled, error) {
	out := make([]*limit.Compiled, 0, len(ls))
	seen := map[string]bool{}
	for i, l := range ls {
		c, err := tc.limits.Compile(l)
		if err != nil {
			return nil, &compileFieldError{msg: fmt.Sprintf("limits[%d].%v", i, err), err: err}
		}
		if seen[l.Name] {
			return nil, fmt.Errorf("limits[%d].name: limit %s is given twice for this tool", i, l.Name)
		}
		seen[l.Name] = true
		out = append(out, c)
	}
	return out, nil
}

// fileLimits reads a file's top-level limits:, checks each (errors name
// "limits[i].field") and adds each to the tools it covers: the tools it
// lists, or every tool of the file. A name is one counter: a limit given
// again (top-level or in a tool) must be given the same way.
func fileLimits(raw json.RawMessage, defs []Definition) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return checkSameLimits(defs)
	}
	var ls []limit.Limit
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ls); err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	lc, err := limit.NewCompiler()
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for _, d := range defs {
		names[d.Name] = true
	}
	for i, l := range ls {
		if _, err := lc.Compile(l); err != nil {
			return fmt.Errorf("limits[%d].%w", i, err)
		}
		for j, t := range l.Tools {
			if !names[t] {
				return fmt.Errorf("limits[%d].tools[%d]: %q is not a tool of this file", i, j, t)
			}
		}
		for k := range defs {
			if len(l.Tools) > 0 && !slices.Contains(l.Tools, defs[k].Name) {
				continue
			}
			if slices.ContainsFunc(defs[k].Limits, func(o limit.Limit) bool { return o.Name == l.Name }) {
				return fmt.Errorf("limits[%d].name: tool %s already has a limit %s", i, defs[k].Name, l.Name)
			}
			defs[k].Limits = append(defs[k].Limits, l)
		}
	}
	return checkSameLimits(defs)
}

// checkSameLimits refuses one limit name written two ways: the tools would
// share one counter under different rules.
func checkSameLimits(defs []Definition) error {
	first := map[string]limit.Limit{}
	for _, d := range defs {
		for _, l := range d.Limits {
			if o, ok := first[l.Name]; ok && !reflect.DeepEqual(o, l) {
				return fmt.Errorf("limit %s is defined two ways (tool %s differs): a limit's name is its counter; give it once, under the top-level limits: with tools: [...]", l.Name, d.Name)
			}
			first[l.Name] = l
		}
	}
	return nil
}
