package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/shadow"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// shadowBuckets are the buckets the shadow commands use, opened as the
// admin (the operator who applies tools).
type shadowBuckets struct {
	tools, shadows, reports jetstream.KeyValue
	maxPayload              int
}

// openShadow connects to url as the admin and opens the tools, shadow and
// report buckets (applying the topology first, as `tools apply` does, so
// a deployment from before shadows gets its buckets).
func openShadow(url string) (context.Context, shadowBuckets, func(), error) {
	nc, js, err := cmdutil.Connect(url)
	if err != nil {
		return nil, shadowBuckets{}, nil, err
	}
	ctx, cancel := cmdutil.Timeout()
	done := func() { cancel(); nc.Close() }
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		done()
		return nil, shadowBuckets{}, nil, err
	}
	b := shadowBuckets{maxPayload: int(nc.MaxPayload())}
	for name, kv := range map[string]*jetstream.KeyValue{streams.BucketTools: &b.tools, streams.BucketToolsShadow: &b.shadows, streams.BucketShadowReport: &b.reports} {
		if *kv, err = js.KeyValue(ctx, name); err != nil {
			done()
			return nil, shadowBuckets{}, nil, cmdutil.ExplainNATS(err, "bucket "+name)
		}
	}
	return ctx, b, done, nil
}

// toolsShadowApply is `tools apply --shadow`: the definitions are checked
// as apply checks them and stored beside the live ones; the policy stage
// compares every call of the tools they name with them from now on.
func toolsShadowApply(defs []tool.Definition, file, url string, tio ToolsIO) error {
	ctx, b, done, err := openShadow(url)
	if err != nil {
		return err
	}
	defer done()
	old, _, _ := shadow.Load(ctx, b.shadows)
	rev, err := shadow.Apply(ctx, b.tools, b.shadows, b.reports, file, defs, time.Now(), b.maxPayload)
	if err != nil {
		return err
	}
	if old.ID != "" {
		fmt.Fprintf(tio.Out, "replaced shadow %s (of %s) and its report\n", old.ID, old.File)
	}
	fmt.Fprintf(tio.Out, "shadow %s of %s applied: %d tool(s) (%v); every call of them is also decided by it, which never acts\n", rev.ID, file, len(rev.Tools), rev.Names())
	fmt.Fprintln(tio.Out, "see what it would change: toolgate tools shadow report; make it live: toolgate tools shadow promote; remove it: toolgate tools shadow drop")
	return nil
}

// toolsShadow: report, promote, drop.
func toolsShadow(args []string, tio ToolsIO) error {
	fs, url := toolsFlags("shadow", tio)
	asJSON := fs.Bool("json", false, "report: print it as JSON")
	ops, err := cmdutil.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(ops) != 1 {
		return cmdutil.UsageError("tools shadow: want one of report, promote, drop")
	}
	switch ops[0] {
	case "report":
		return shadowReport(*url, *asJSON, tio)
	case "promote":
		return shadowPromote(*url, tio)
	case "drop":
		return shadowDrop(*url, tio)
	}
	return cmdutil.UsageError("tools shadow: unknown %q (want report, promote or drop)", ops[0])
}

// shadowReport prints the differences since the shadow started, per tool;
// it exits 3, as the what-if does, when a call that passed would be refused.
func shadowReport(url string, asJSON bool, tio ToolsIO) error {
	ctx, b, done, err := openShadow(url)
	if err != nil {
		return err
	}
	defer done()
	rev, _, err := shadow.Load(ctx, b.shadows)
	if err != nil {
		return err
	}
	rep, err := shadow.Read(ctx, b.reports, rev.ID)
	if err != nil {
		return err
	}
	if asJSON {
		out := struct {
			Shadow    string    `json:"shadow"`
			File      string    `json:"file"`
			StartedAt time.Time `json:"started_at"`
			Tools     []string  `json:"shadowed_tools"`
			Report    any       `json:"report"`
		}{rev.ID, rev.File, rev.StartedAt, rev.Names(), rep.JSON()}
		enc := json.NewEncoder(tio.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(tio.Out, "shadow %s of %s, since %s, tools %v (counts are written about once a second)\n",
			rev.ID, rev.File, rev.StartedAt.Format(time.RFC3339), rev.Names())
		rep.Print(tio.Out)
	}
	if rep.Refused() > 0 {
		return &cmdutil.ExitError{Code: exitWhatIfRefused}
	}
	return nil
}

// shadowPromote makes the shadow live with apply's checks and report.
func shadowPromote(url string, tio ToolsIO) error {
	ctx, b, done, err := openShadow(url)
	if err != nil {
		return err
	}
	defer done()
	rev, changes, err := shadow.Promote(ctx, b.tools, b.shadows, b.reports)
	if errors.Is(err, shadow.ErrNone) {
		return err
	}
	if len(changes) > 0 || err == nil {
		printChanges(tio.Out, rev.File, changes, err == nil)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(tio.Out, "shadow %s promoted: it is live, and no shadow runs now\n", rev.ID)
	return nil
}

func shadowDrop(url string, tio ToolsIO) error {
	ctx, b, done, err := openShadow(url)
	if err != nil {
		return err
	}
	defer done()
	rev, err := shadow.Drop(ctx, b.shadows, b.reports)
	if err != nil {
		return err
	}
	fmt.Fprintf(tio.Out, "shadow %s dropped with its report; the live definitions are unchanged\n", rev.ID)
	return nil
}
