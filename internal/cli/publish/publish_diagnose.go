package publish

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/records"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// errNoOperator: the admin's credentials are not at hand, so publish can
// read only what a producer may, its results and progress.
var errNoOperator = errors.New("publish: no operator credentials")

// maxPublishProbe bounds the call ids operatorView looks up when no result said how
// many calls the response proposed.
const maxPublishProbe = 64

// operatorView reads what a response's calls without an outcome (named by
// key, call.Key) wait for, from their status records (and approval
// records), as `toolgate status` does. A producer's NATS user may read
// neither, so this needs the admin's credentials at hand (publish run
// beside `toolgate up`, or TOOLGATE_NATS_USER=admin); errNoOperator when
// there are none.
func operatorView(url string, o *producer.Outcomes, key string) ([]string, error) {
	if cmdutil.CredentialsFor(url, authz.Admin, os.Getenv).User != authz.Admin {
		return nil, errNoOperator // none, or a user (from the URL, TOOLGATE_NATS_USER) who may not read them
	}
	nc, js, err := cmdutil.ConnectAs(url, authz.Admin)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	approvals, _ := js.KeyValue(ctx, streams.BucketApprovals)
	have := map[string]bool{}
	for _, c := range o.Calls {
		have[c.CallID] = true
	}
	n := o.Expected
	if n == 0 {
		n = maxPublishProbe
	}
	var lines []string
	for i := 0; i < n; i++ {
		id := call.ID(key, i)
		if have[id] {
			continue
		}
		// Stored, or ended without a record (its result, issue 30), or in
		// flight (its hop).
		rec, err := records.Reader{JS: js}.Find(ctx, id)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			if o.Expected == 0 {
				break // past the response's last call
			}
			lines = append(lines, fmt.Sprintf("  %s: no status record yet", id))
			continue
		}
		lines = append(lines, callWaitLines(ctx, approvals, *rec)...)
	}
	if len(lines) == 0 {
		return []string{"  no stage has recorded a call of it: are toolgate's stages running (`toolgate up`), not only its NATS server?"}, nil
	}
	return lines, nil
}

// callWaitLines says where one call is and what it waits for.
func callWaitLines(ctx context.Context, approvals jetstream.KeyValue, rec pipeline.StatusRecord) []string {
	head := fmt.Sprintf("  %s %s: %s", rec.CallID, rec.Tool, rec.Status)
	if n := len(rec.History); n > 0 {
		head += fmt.Sprintf(" at %s since %s", rec.History[n-1].Stage, rec.History[n-1].At.Local().Format(time.TimeOnly))
	}
	w := rec.Waiting
	if w == nil && rec.Status == call.ApprovalRequired && approvals != nil {
		if r, _, err := approval.NewStore(approvals).Get(ctx, rec.CallID); err == nil {
			w = &pipeline.Wait{Stage: streams.Policy, For: pipeline.WaitApproval, Detail: r.Why, Until: r.ExpiresAt, By: []string{authz.Admin}}
		}
	}
	if w == nil {
		return []string{cmdutil.Printable(head)}
	}
	lines := []string{cmdutil.Printable(head + ": waiting for " + w.For)}
	var detail []string
	if w.Detail != "" {
		detail = append(detail, w.Detail)
	}
	if w.Attempt > 0 && w.Of > 0 {
		detail = append(detail, fmt.Sprintf("attempt %d of %d", w.Attempt, w.Of))
	}
	if !w.Until.IsZero() {
		detail = append(detail, fmt.Sprintf("until %s (in %s)", w.Until.Local().Format(time.DateTime), time.Until(w.Until).Round(time.Second)))
	}
	if len(w.By) > 0 {
		detail = append(detail, "decided by the NATS user "+strings.Join(w.By, " or "))
	}
	if len(detail) > 0 {
		lines = append(lines, cmdutil.Printable("      "+strings.Join(detail, "; ")))
	}
	if w.For == pipeline.WaitApproval {
		lines = append(lines, cmdutil.Printable(fmt.Sprintf("      approve: toolgate approvals show %s, then toolgate approve %s --by NAME (or toolgate deny %s --by NAME)", rec.CallID, rec.CallID, rec.CallID)))
	}
	return lines
}
