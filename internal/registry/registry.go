// Package registry keeps tool definitions in a JetStream key-value bucket.
// Every replica of every gate watches the bucket, so a `tools apply` is seen
// without a restart; each definition is compiled once per revision.
package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/tool"
)

// Registry is a live, compiled view of the tools bucket.
type Registry struct {
	kv        jetstream.KeyValue
	compiler  *tool.Compiler // one CEL environment for every revision
	log       zerolog.Logger
	malformed func(key string, err error)
	mu        sync.RWMutex
	tools     map[string]*tool.Compiled
	bad       map[string]error // definitions in the bucket that do not compile
}

// Option configures Open.
type Option func(*Registry)

// OnMalformed tells fn of every definition in the bucket that cannot be
// used (it does not decode, names another tool than its key, does not
// compile, or panics the compiler); the registry leaves that tool out and
// keeps serving the others.
func OnMalformed(fn func(key string, err error)) Option {
	return func(r *Registry) { r.malformed = fn }
}

// Open starts watching bucket kv and returns once the current definitions
// are loaded. The watch stops when ctx is done.
func Open(ctx context.Context, kv jetstream.KeyValue, log zerolog.Logger, opts ...Option) (*Registry, error) {
	tc, err := tool.NewCompiler()
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	r := &Registry{kv: kv, compiler: tc, log: log, tools: map[string]*tool.Compiled{}, bad: map[string]error{}}
	for _, o := range opts {
		o(r)
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return nil, fmt.Errorf("registry: watch: %w", err)
	}
	if err := Follow(ctx, w, r.apply); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Registry) apply(e jetstream.KeyValueEntry) {
	defer func() {
		if p := recover(); p != nil { // the watch goes on with the next record
			r.log.Error().Str("tool", e.Key()).Interface("panic", p).Msg("tool definition could not be applied")
		}
	}()
	name := e.Key()
	if e.Operation() != jetstream.KeyValuePut {
		r.mu.Lock()
		delete(r.tools, name)
		delete(r.bad, name)
		r.mu.Unlock()
		return
	}
	c, err := r.compile(name, e.Value(), e.Revision())
	r.mu.Lock()
	if err != nil {
		delete(r.tools, name)
		r.bad[name] = err
	} else {
		delete(r.bad, name)
		r.tools[name] = c
	}
	r.mu.Unlock()
	if err != nil {
		// Apply refuses broken definitions, so this is a bucket written by
		// hand; the tool is unusable rather than half-usable.
		r.log.Error().Err(err).Str("tool", name).Uint64("revision", e.Revision()).Msg("tool definition does not compile")
		if r.malformed != nil {
			r.malformed(name, err)
		}
	}
}

// compile decodes and compiles the definition stored under key; a panic in
// the compiler is an error of this definition only.
func (r *Registry) compile(key string, data []byte, rev uint64) (c *tool.Compiled, err error) {
	defer func() {
		if p := recover(); p != nil {
			c, err = nil, fmt.Errorf("registry: tool %s: compiling it panicked: %v", key, p)
		}
	}()
	d, err := Decode(key, data)
	if err != nil {
		return nil, err
	}
	return r.compiler.Compile(d, rev)
}

// Decode reads the definition stored under key: one JSON object whose name
// is the key.
func Decode(key string, data []byte) (tool.Definition, error) {
	var d tool.Definition
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&d); err != nil {
		return tool.Definition{}, fmt.Errorf("registry: tool %s: %w", key, err)
	}
	if dec.More() {
		return tool.Definition{}, fmt.Errorf("registry: tool %s: data after the definition", key)
	}
	if d.Name != key {
		return tool.Definition{}, fmt.Errorf("registry: the definition stored as tool %s names tool %q; apply it again with `toolgate tools apply`", key, redact.Clip(d.Name))
	}
	return d, nil
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

// Apply is Sync for callers that want only the revision of each tool of
// defs: an unchanged tool keeps its revision.
func Apply(ctx context.Context, kv jetstream.KeyValue, file string, defs []tool.Definition, prune bool) (map[string]uint64, error) {
	changes, err := Sync(ctx, kv, file, defs, prune)
	revs := map[string]uint64{}
	for _, c := range changes {
		if c.Action != Removed && c.Action != Kept {
			revs[c.Name] = c.Revision
		}
	}
	return revs, err
}

// Get reads one stored definition and its revision.
func Get(ctx context.Context, kv jetstream.KeyValue, name string) (tool.Definition, uint64, error) {
	e, err := kv.Get(ctx, name)
	if err != nil {
		return tool.Definition{}, 0, fmt.Errorf("registry: tool %s: %w", name, err)
	}
	d, err := Decode(name, e.Value())
	if err != nil {
		return d, 0, err
	}
	return d, e.Revision(), nil
}
