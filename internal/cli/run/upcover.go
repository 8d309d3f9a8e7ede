package run

import (
	"context"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/tools"
)

// covered reports whether an executor group of groups lists tool: only its
// user, executor-<group>, may subscribe to toolgate.exec.<tool>.
func covered(tool string, groups []authz.Group) bool {
	for _, g := range groups {
		if slices.Contains(g.Tools, tool) {
			return true
		}
	}
	return false
}

// warnUncovered watches the tools bucket until ctx is done and, for each
// tool with a NATS executor that no executor group may serve (at start for
// the tools registered, later for each one applied), has cover make a group
// serve it (up_groups.go), or warns once when there is no cover or it
// fails: such a call passes every gate and then waits for an executor that
// cannot connect.
func warnUncovered(ctx context.Context, js jetstream.JetStream, groups []authz.Group, flagValue string, cover func(string) ([]tools.Coverage, error), log zerolog.Logger) error {
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		return err
	}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return err
	}
	defer w.Stop()
	warned := map[string]bool{}
	for {
		var e jetstream.KeyValueEntry
		select {
		case <-ctx.Done():
			return nil
		case e = <-w.Updates():
		}
		if e == nil {
			continue // the end of the values stored at start; later ones follow
		}
		d, err := registry.Decode(e.Key(), e.Value())
		if err != nil || d.Executor.Type == "http" || d.Executor.Type == "mcp" || warned[d.Name] || covered(d.Name, groups) {
			continue // a malformed definition is the registry's to report
		}
		var cerr error
		if cover != nil {
			if _, cerr = cover(d.Name); cerr == nil {
				continue // logged by cover
			}
		}
		warned[d.Name] = true
		ev := log.Warn().Str("tool", d.Name).Str("executor_groups", flagValue)
		if cerr != nil {
			ev = ev.Err(cerr)
		}
		ev.Msg("no executor group may serve tool " + d.Name + ": its calls will wait for an executor that cannot subscribe; add it to a group (--executor-groups '" + suggest(flagValue, d.Name) + "', TOOLGATE_EXECUTOR_GROUPS) and restart toolgate up")
	}
}

// suggest is the --executor-groups value with tool added to its first
// group (or a group of its own).
func suggest(flagValue, tool string) string {
	first, rest, _ := strings.Cut(flagValue, ";")
	if strings.TrimSpace(first) == "" || !strings.Contains(first, "=") {
		return "tools=" + tool
	}
	first = strings.TrimRight(strings.TrimSpace(first), ",") + "," + tool
	if rest != "" {
		return first + ";" + rest
	}
	return first
}
