package stage

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/streams"
)

// approvalWaits is the Emitter's Waits: a call the policy gate leaves in
// approval_required waits for a human decision until its approval record
// expires, decided by the NATS admin user (`toolgate approve|deny`). The
// expiry and the reason come from the approval record; when it cannot be
// read, from the step and ttl.
func approvalWaits(js jetstream.JetStream, ttl time.Duration) func(string, call.Envelope) *pipeline.Wait {
	if ttl <= 0 {
		ttl = approval.DefaultTTL
	}
	var once sync.Once
	var store *approval.Store
	return func(stage string, e call.Envelope) *pipeline.Wait {
		if stage != streams.Policy || e.Status != call.ApprovalRequired {
			return nil
		}
		since := e.CreatedAt
		for i := len(e.History) - 1; i >= 0; i-- {
			if e.History[i].Status == call.ApprovalRequired {
				since = e.History[i].At
				break
			}
		}
		w := &pipeline.Wait{Stage: stage, For: pipeline.WaitApproval, Since: since.UTC(), Until: since.Add(ttl).UTC(), By: []string{authz.Admin}}
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if kv, err := js.KeyValue(ctx, streams.BucketApprovals); err == nil {
				store = approval.NewStore(kv)
			}
		})
		if store == nil {
			return w
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if rec, _, err := store.Get(ctx, e.CallID); err == nil && rec.State == approval.Pending && rec.Matches(e.ToolName, e.Arguments) {
			w.Since, w.Until, w.Detail = rec.RequestedAt.UTC(), rec.ExpiresAt.UTC(), pipeline.CutText(rec.Why)
		}
		return w
	}
}
