// Package registry keeps tool definitions in a JetStream key-value bucket.
// Every replica of every gate watches the bucket, so a `tools apply` is seen
// without a restart; each definition is compiled once per revision.
package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/pkg/tool"
)

// Registry is a live, compiled view of the tools bucket.
type Registry struct {
	kv    jetstream.KeyValue
	log   zerolog.Logger
	mu    sync.RWMutex
	tools map[string]*tool.Compiled
	bad   map[string]error // definitions in the bucket that do not compile
}

// Open starts watching bucket kv and returns once the current definitions
// are loaded. The watch stops when ctx is done.
func Open(ctx context.Context, kv jetstream.KeyValue, log zerolog.Logger) (*Registry, error) {
	r := &Registry{kv: kv, log: log, tools: map[string]*tool.Compiled{}, bad: map[string]error{}}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return nil, fmt.Errorf("registry: watch: %w", err)
	}
	initial := make(chan struct{})
	go func() {
		defer w.Stop()
		loaded := false
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e == nil { // end of the initial values
					if !loaded {
						loaded = true
						close(initial)
					}
					continue
				}
				r.apply(e)
			}
		}
	}()
	select {
	case <-initial:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (r *Registry) apply(e jetstream.KeyValueEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := e.Key()
	if e.Operation() != jetstream.KeyValuePut {
		delete(r.tools, name)
		delete(r.bad, name)
		return
	}
	var d tool.Definition
	err := json.Unmarshal(e.Value(), &d)
	var c *tool.Compiled
	if err == nil {
		c, err = tool.Compile(d, e.Revision())
	}
	if err != nil {
		// Apply refuses broken definitions, so this is a bucket written by
		// hand; the tool is unusable rather than half-usable.
		r.log.Error().Err(err).Str("tool", name).Uint64("revision", e.Revision()).Msg("tool definition does not compile")
		delete(r.tools, name)
		r.bad[name] = err
		return
	}
	delete(r.bad, name)
	r.tools[name] = c
}

// Lookup returns the compiled tool called name.
func (r *Registry) Lookup(name string) (*tool.Compiled, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c, ok := r.tools[name]
	return c, ok
}

// Names lists the registered tools, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Apply compiles every definition and stores them all, or none when any is
// broken. With prune, tools absent from defs are deleted. It returns the
// stored revision per tool.
func Apply(ctx context.Context, kv jetstream.KeyValue, file string, defs []tool.Definition, prune bool) (map[string]uint64, error) {
	if _, err := tool.CompileAll(file, defs); err != nil {
		return nil, err
	}
	revs := map[string]uint64{}
	keep := map[string]bool{}
	for _, d := range defs {
		data, err := json.Marshal(d)
		if err != nil {
			return revs, fmt.Errorf("registry: %s: %w", d.Name, err)
		}
		rev, err := kv.Put(ctx, d.Name, data)
		if err != nil {
			return revs, fmt.Errorf("registry: store %s: %w", d.Name, err)
		}
		revs[d.Name] = rev
		keep[d.Name] = true
	}
	if prune {
		keys, err := kv.Keys(ctx)
		if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
			return revs, fmt.Errorf("registry: list: %w", err)
		}
		for _, k := range keys {
			if !keep[k] {
				if err := kv.Delete(ctx, k); err != nil {
					return revs, fmt.Errorf("registry: prune %s: %w", k, err)
				}
			}
		}
	}
	return revs, nil
}

// Get reads one stored definition and its revision.
func Get(ctx context.Context, kv jetstream.KeyValue, name string) (tool.Definition, uint64, error) {
	e, err := kv.Get(ctx, name)
	if err != nil {
		return tool.Definition{}, 0, fmt.Errorf("registry: tool %s: %w", name, err)
	}
	var d tool.Definition
	if err := json.Unmarshal(e.Value(), &d); err != nil {
		return d, 0, fmt.Errorf("registry: tool %s: %w", name, err)
	}
	return d, e.Revision(), nil
}
