package tools

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/whatif"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// exitWhatIfRefused is the exit status of `tools apply --what-if` when a
// call that passed every gate would now be refused: a CI job gates a change
// of definitions on it.
const exitWhatIfRefused = 3

// whatIfFlags are the flags of `tools apply --what-if`.
type whatIfFlags struct {
	on    *bool
	since *time.Duration
	tool  *string
	json  *bool
}

// addWhatIfFlags adds --what-if and its flags to apply's flag set.
func addWhatIfFlags(fs *flag.FlagSet) whatIfFlags {
	return whatIfFlags{
		on:    fs.Bool("what-if", false, "store nothing: re-run the recorded calls of the window through these definitions' parse, validate, business and policy gates and limits and compare each with what happened (exit 3 when a call that passed would now be refused)"),
		since: fs.Duration("since", 24*time.Hour, "what-if: the window, back from now (the input is kept 24h: older calls are counted as aged out)"),
		tool:  fs.String("tool", "", "what-if: only the calls of this tool"),
		json:  fs.Bool("json", false, "what-if: print the report as JSON"),
	}
}

// toolsWhatIf is `tools apply --what-if`: it reads the status records and
// the raw input stream as the admin (the operator who applies tools) — the
// raw input holds producers' Toolgate-Token headers, which no other user
// may read — and publishes nothing and changes nothing.
func toolsWhatIf(defs []tool.Definition, url string, wf whatIfFlags, tio ToolsIO) error {
	if *wf.since <= 0 {
		return cmdutil.UsageError("tools apply: --since must be positive, e.g. 24h")
	}
	ev, err := whatif.New(defs)
	if err != nil {
		return err
	}
	nc, js, err := cmdutil.ConnectAs(url, authz.Admin)
	if err != nil {
		return err
	}
	defer nc.Close()
	// No deadline for the whole read (a day of traffic takes a while);
	// whatif stops on a stream that goes quiet before its end.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := whatif.Source{JS: js, Since: time.Now().Add(-*wf.since), Tool: *wf.tool}
	var progressed bool
	if f, ok := tio.Err.(*os.File); ok && cmdutil.IsTerminal(f) {
		src.Progress = func(read, total uint64) {
			fmt.Fprintf(f, "\rwhat-if: %d of %d input messages", read, total)
			progressed = true
		}
	}
	rep, err := whatif.Run(ctx, src, ev)
	if progressed {
		fmt.Fprintln(tio.Err)
	}
	if err != nil {
		return err
	}
	if *wf.json {
		enc := json.NewEncoder(tio.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep.JSON()); err != nil {
			return err
		}
	} else {
		rep.Print(tio.Out)
	}
	if n := rep.Refused(); n > 0 {
		return &cmdutil.ExitError{Code: exitWhatIfRefused}
	}
	return nil
}
