package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/tool"
)

// Action is what Sync did to one tool.
type Action string

// What Sync reports per tool.
const (
	Added     Action = "added"
	Changed   Action = "changed"
	Unchanged Action = "unchanged" // nothing written: the revision stays
	Removed   Action = "removed"   // deleted by prune
	Kept      Action = "kept"      // registered, not in the file, not pruned
)

// Change is one tool's line in an apply report.
type Change struct {
	Name   string
	Action Action
	// Revision is the tool's revision after Sync (0 for a removed tool).
	Revision uint64
	// Fields are, for a changed tool, the definition keys that differ
	// ("input_schema", "policy"); "stored definition unreadable" when the
	// bucket held something that does not decode.
	Fields []string
}

// Sync compiles every definition and stores those that differ from what the
// bucket holds, or none when any is broken. A definition equal to the stored
// one (key order and formatting aside) is not written, so its revision
// tells whether anything changed. With prune, registered tools that defs
// lack are deleted; without, they are reported Kept. Changes come in the
// order of defs, then the others sorted. A tool written by someone else
// while Sync runs is an error: apply again.
func Sync(ctx context.Context, kv jetstream.KeyValue, file string, defs []tool.Definition, prune bool) ([]Change, error) {
	if _, err := tool.CompileAll(file, defs); err != nil {
		return nil, err
	}
	var changes []Change
	in := map[string]bool{}
	for _, d := range defs {
		in[d.Name] = true
		c, err := put(ctx, kv, d)
		if err != nil {
			return changes, err
		}
		changes = append(changes, c)
	}
	keys, err := kv.Keys(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		return changes, fmt.Errorf("registry: list: %w", err)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if in[k] {
			continue
		}
		if !prune {
			c := Change{Name: k, Action: Kept}
			if e, err := kv.Get(ctx, k); err == nil {
				c.Revision = e.Revision()
			}
			changes = append(changes, c)
			continue
		}
		if err := kv.Delete(ctx, k); err != nil {
			return changes, fmt.Errorf("registry: prune %s: %w", k, err)
		}
		changes = append(changes, Change{Name: k, Action: Removed})
	}
	return changes, nil
}

// put stores d unless the bucket holds the same definition.
func put(ctx context.Context, kv jetstream.KeyValue, d tool.Definition) (Change, error) {
	data, err := json.Marshal(d)
	if err != nil {
		return Change{}, fmt.Errorf("registry: %s: %w", d.Name, err)
	}
	e, err := kv.Get(ctx, d.Name)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		rev, err := kv.Create(ctx, d.Name, data)
		if err != nil {
			return Change{}, fmt.Errorf("registry: store %s: %w (was it applied at the same time elsewhere? apply again)", d.Name, err)
		}
		return Change{Name: d.Name, Action: Added, Revision: rev}, nil
	}
	if err != nil {
		return Change{}, fmt.Errorf("registry: read %s: %w", d.Name, err)
	}
	fields, err := differing(e.Value(), data)
	if err != nil {
		fields = []string{"stored definition unreadable"}
	}
	if err == nil && len(fields) == 0 {
		return Change{Name: d.Name, Action: Unchanged, Revision: e.Revision()}, nil
	}
	rev, err := kv.Update(ctx, d.Name, data, e.Revision())
	if err != nil {
		return Change{}, fmt.Errorf("registry: store %s: %w (it changed while applying; apply again)", d.Name, err)
	}
	return Change{Name: d.Name, Action: Changed, Revision: rev, Fields: fields}, nil
}

// differing lists the top-level keys whose values differ between two JSON
// objects, compared as values (numbers by their digits).
func differing(old, new []byte) ([]string, error) {
	a, err := fieldsOf(old)
	if err != nil {
		return nil, err
	}
	b, err := fieldsOf(new)
	if err != nil {
		return nil, err
	}
	var keys []string
	for k, v := range b {
		if w, ok := a[k]; !ok || w != v {
			keys = append(keys, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// fieldsOf maps each top-level key of a JSON object to its value in one
// canonical form: encoding/json sorts object keys, json.Number keeps digits.
func fieldsOf(data []byte) (map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("registry: not an object")
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		c, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[k] = string(c)
	}
	return out, nil
}
