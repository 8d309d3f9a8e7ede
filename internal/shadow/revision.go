// Package shadow runs a candidate revision of the tool definitions beside
// the live one: `toolgate tools apply --shadow` stores it (Apply), the
// policy stage evaluates every live call also against it in process and
// counts where its verdict would differ (Comparer), and `tools shadow
// report|promote|drop` read, make live or remove it. A shadow never acts:
// its verdicts go nowhere but into counts.
package shadow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/tool"
)

// Key is the one key of the shadow bucket (streams.BucketToolsShadow): a
// whole revision is one value, so it is applied and dropped at once.
const Key = "active"

// ErrNone: no shadow is applied.
var ErrNone = errors.New("shadow: no shadow revision is applied (apply one with toolgate tools apply --shadow -f FILE)")

// Revision is a shadow revision: the candidate definitions, what they
// overlay (a tool the file does not name keeps its live definition, as
// `tools apply` without --prune), and the live revisions they were applied
// over, which promote checks.
type Revision struct {
	ID        string            `json:"id"`
	File      string            `json:"file"`
	StartedAt time.Time         `json:"started_at"`
	Base      map[string]uint64 `json:"base"` // live revision of each tool at apply; 0: not registered
	Tools     []tool.Definition `json:"tools"`
}

// Names lists the tools of r.
func (r Revision) Names() []string {
	out := make([]string, 0, len(r.Tools))
	for _, d := range r.Tools {
		out = append(out, d.Name)
	}
	return out
}

// Apply compiles defs (the checks of `tools apply`), and stores them as
// the shadow revision, replacing any other and clearing its report. max
// bounds the stored value (the server's max payload).
func Apply(ctx context.Context, tools, shadows, reports jetstream.KeyValue, file string, defs []tool.Definition, now time.Time, max int) (Revision, error) {
	if _, err := tool.CompileAll(file, defs); err != nil {
		return Revision{}, err
	}
	rev := Revision{ID: now.UTC().Format("20060102T150405.000000000Z"), File: file, StartedAt: now.UTC(), Base: map[string]uint64{}, Tools: defs}
	for _, d := range defs {
		e, err := tools.Get(ctx, d.Name)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			rev.Base[d.Name] = 0
		case err != nil:
			return Revision{}, fmt.Errorf("shadow: read live tool %s: %w", d.Name, err)
		default:
			rev.Base[d.Name] = e.Revision()
		}
	}
	data, err := json.Marshal(rev)
	if err != nil {
		return Revision{}, fmt.Errorf("shadow: %w", err)
	}
	if max > 0 && len(data) > max {
		return Revision{}, fmt.Errorf("shadow: %s: the shadow revision is %d bytes, more than the %d a message may hold; shadow fewer tools at once", file, len(data), max)
	}
	if err := clearReport(ctx, reports); err != nil {
		return Revision{}, err
	}
	if _, err := shadows.Put(ctx, Key, data); err != nil {
		return Revision{}, fmt.Errorf("shadow: store: %w", err)
	}
	return rev, nil
}

// Load reads the shadow revision and its bucket revision; ErrNone when
// there is none.
func Load(ctx context.Context, shadows jetstream.KeyValue) (Revision, uint64, error) {
	e, err := shadows.Get(ctx, Key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Revision{}, 0, ErrNone
	}
	if err != nil {
		return Revision{}, 0, fmt.Errorf("shadow: read: %w", err)
	}
	r, err := Decode(e.Value())
	return r, e.Revision(), err
}

// Decode reads a stored revision.
func Decode(data []byte) (Revision, error) {
	var r Revision
	if err := json.Unmarshal(data, &r); err != nil {
		return Revision{}, fmt.Errorf("shadow: unreadable shadow revision: %w (drop it with toolgate tools shadow drop)", err)
	}
	if r.ID == "" {
		return Revision{}, errors.New("shadow: the stored shadow revision has no id (drop it with toolgate tools shadow drop)")
	}
	return r, nil
}

// Drop removes the shadow revision (readable or not) and its report.
func Drop(ctx context.Context, shadows, reports jetstream.KeyValue) (Revision, error) {
	r, rev, err := Load(ctx, shadows)
	if rev == 0 { // none, or the bucket could not be read
		return r, err
	}
	if err := shadows.Delete(ctx, Key, jetstream.LastRevision(rev)); err != nil {
		return r, fmt.Errorf("shadow: drop: %w (it changed meanwhile; look again)", err)
	}
	return r, clearReport(ctx, reports)
}

// Promote makes the shadow revision live: every tool it names must still
// be at the live revision it was applied over (else someone applied since,
// and its report compared with definitions that are gone), then it is
// applied as `tools apply` does (compiled, stored where it differs), and the
// shadow and its report are removed.
func Promote(ctx context.Context, tools, shadows, reports jetstream.KeyValue) (Revision, []registry.Change, error) {
	r, rev, err := Load(ctx, shadows)
	if err != nil {
		return r, nil, err
	}
	for _, d := range r.Tools {
		now := uint64(0)
		e, err := tools.Get(ctx, d.Name)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return r, nil, fmt.Errorf("shadow: read live tool %s: %w", d.Name, err)
		default:
			now = e.Revision()
		}
		if now != r.Base[d.Name] {
			return r, nil, fmt.Errorf("shadow: tool %s changed since the shadow was applied (live revision %d then, %d now): its report compares with definitions that are gone; apply the shadow again (toolgate tools apply --shadow -f %s), watch, then promote", d.Name, r.Base[d.Name], now, r.File)
		}
	}
	changes, err := registry.Sync(ctx, tools, r.File, r.Tools, false)
	if err != nil {
		return r, changes, err
	}
	if err := shadows.Delete(ctx, Key, jetstream.LastRevision(rev)); err != nil {
		return r, changes, fmt.Errorf("shadow: promoted, but removing the shadow failed: %w (drop it with toolgate tools shadow drop)", err)
	}
	return r, changes, clearReport(ctx, reports)
}
