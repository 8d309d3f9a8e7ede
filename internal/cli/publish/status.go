package publish

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/ingest"
	"github.com/toolgate/toolgate/internal/stage"
	"github.com/toolgate/toolgate/pkg/wire"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// responseStory is `status RESPONSE-ID`: the response's calls, its own
// result when it yielded none, and its stream while one is stored.
type responseStory struct {
	ResponseID string               `json:"response_id"`
	Calls      []story              `json:"calls"`
	Result     *wire.ResponseResult `json:"result,omitempty"`
	Stream     *streamState         `json:"stream,omitempty"`
	seqs       map[string]uint64    // the last result read in each results stream, for a follower
}

// Status prints a call's whole story (status CALL-ID), a response's
// calls and stream (status RESPONSE-ID), or without an operand the
// overview: each executor group's concurrency in use, queue and circuit,
// and with a tenant list each listed tenant's lane (status_groups.go).
func Status(args []string) error { return RunStatus(os.Stdout, args) }

// RunStatus is status writing to w.
func RunStatus(w io.Writer, args []string) error {
	fs := cmdutil.WithUsage(flag.NewFlagSet("status", flag.ContinueOnError), "status", "")
	url := cmdutil.NATSFlag(fs)
	asJSON := fs.Bool("json", false, "print one JSON object: {status, waiting, result} for a call; {response_id, calls, result, stream} for a response; {executor_groups, tenants} without an operand")
	idle := idleFlag(fs)
	ops, err := cmdutil.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(ops) > 1 {
		return cmdutil.UsageError("status: want one call id (rid-0; results carry it as call_id) or response id, or none for the overview")
	}
	if len(ops) == 0 { // the overview: status_groups.go
		nc, js, err := cmdutil.Connect(*url)
		if err != nil {
			return err
		}
		defer nc.Close()
		ctx, cancel := cmdutil.Timeout()
		defer cancel()
		ov, err := readOverview(ctx, js)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(w, ov)
		}
		return printOverview(w, ov, time.Now())
	}
	id := ops[0]
	if !call.ValidResponseID(id) {
		return cmdutil.UsageError("status: %q is neither a call id nor a response id: both are 1 to 128 letters, digits, '-' and '_'", cmdutil.Printable(id))
	}
	nc, js, err := cmdutil.Connect(*url)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := cmdutil.Timeout()
	defer cancel()
	rd := &reader{ctx: ctx, js: js, now: time.Now, idle: *idle}
	return rd.status(w, id, *asJSON)
}

// status writes the story of id, a call id or else a response id.
func (rd *reader) status(w io.Writer, id string, asJSON bool) error {
	rec, err := rd.record(id)
	if err != nil {
		return err
	}
	if rec != nil {
		results, _, _, err := rd.outcomes(rec.ResponseID)
		if err != nil {
			return err
		}
		s, err := rd.storyOf(*rec, results)
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(w, s)
		}
		return printStory(w, s, rd.now())
	}
	rs, err := rd.response(id)
	if err != nil {
		return err
	}
	if len(rs.Calls) == 0 && rs.Result == nil && rs.Stream == nil {
		return fmt.Errorf("status: no call or response %s (is it a call id like %s-0, or a response id? `toolgate calls ls` lists the calls toolgate keeps, 7 days by default)", id, id)
	}
	if asJSON {
		return writeJSON(w, rs)
	}
	return printResponse(w, rs, rd.now(), rd.idle)
}

// response gathers what toolgate keeps of responseID.
func (rd *reader) response(responseID string) (responseStory, error) {
	rs := responseStory{ResponseID: responseID, Calls: []story{}}
	results, resp, seqs, err := rd.outcomes(responseID)
	if err != nil {
		return rs, err
	}
	rs.Result, rs.seqs = resp, seqs
	recs, err := rd.callsOf(responseID, results)
	if err != nil {
		return rs, err
	}
	for _, r := range recs {
		s, err := rd.storyOf(r, results)
		if err != nil {
			return rs, err
		}
		rs.Calls = append(rs.Calls, s)
	}
	if rs.Stream, err = rd.streamOf(responseID); err != nil {
		return rs, err
	}
	return rs, nil
}

// idleFlag adds --stream-idle-timeout: the accumulate stage's, to say when
// an open stream ends.
func idleFlag(fs *flag.FlagSet) *time.Duration {
	def := ingest.DefaultIdleTimeout
	if d, err := time.ParseDuration(stage.EnvOr(os.Getenv, "TOOLGATE_STREAM_IDLE_TIMEOUT", "")); err == nil && d > 0 {
		def = d
	}
	return fs.Duration("stream-idle-timeout", def, "the accumulate stage's stream idle timeout, to tell when an open stream ends (TOOLGATE_STREAM_IDLE_TIMEOUT)")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
