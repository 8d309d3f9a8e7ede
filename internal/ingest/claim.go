package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// CodeResponseIDConflict: a response id already turned into calls arrived
// again with other content, or from another identity. Nothing is replaced
// and nothing of the second arrival executes.
const CodeResponseIDConflict = "response_id_conflict"

// claim is what the response-ids bucket holds for a response id that was
// turned into calls: the kind of input and a hash of its content (a whole
// response: its sender's binding and body; a stream: its sender's binding,
// since every event of it must carry that binding).
type claim struct {
	Kind string    `json:"kind"` // response or stream
	Hash string    `json:"hash"` // hex sha256
	At   time.Time `json:"at"`
}

func contentHash(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// claimWhole and claimStream are the claims of a whole response and of a
// stream sent by s.
func claimWhole(s sender, body []byte) claim {
	return claim{Kind: "response", Hash: contentHash([]byte("response"), []byte(s.binding), body)}
}

func claimStream(s sender) claim {
	return claim{Kind: "stream", Hash: contentHash([]byte("stream"), []byte(s.binding))}
}

// claimID claims rid for tenant with c before any call of it runs, and
// returns the key the response's calls are named by (call.Key: ids are
// claimed per tenant, so one tenant can neither squat another's id nor
// learn that it exists), and nil when rid is new for tenant or was claimed
// with the same content (a redelivery or a producer's retry: processed as
// before), or the earlier claim when the content differs. Without
// JetStream (handler tests) nothing is recorded.
//
// The claim is one message on the response's claimed subject
// (streams.InTenantClaimed), which holds one for ResponseIDTTL: a whole
// response that came on it was claimed by the server at publish (onClaimed);
// any other input is claimed by a claim message accumulate publishes there
// (claimed.go). Claims written into the response-ids bucket before the
// upgrade are read first, while it may hold a live one (kvClaim).
func (a *Accumulate) claimID(ctx context.Context, m worker.Msg, tenant, rid string, c claim) (string, *claim, error) {
	key := call.Key(tenant, rid)
	if a.JS == nil {
		return key, nil, nil
	}
	if k, old, found, err := a.kvClaim(ctx, tenant, rid, c); err != nil || found {
		return k, old, err
	}
	if !onClaimed(m.Subject) {
		old, err := a.claimByMessage(ctx, m, tenant, rid, c)
		if err != nil || old != nil {
			return key, old, err
		}
	}
	// In the claim period after P changed, a copy where the P before put
	// rid, stored first, keeps it (claimed_partitions.go).
	first, err := a.migrate(ctx, m, tenant, rid)
	switch {
	case err != nil || first == nil:
		return key, nil, err
	case first.Kind != c.Kind || first.Hash != c.Hash:
		return key, first, nil
	case onClaimed(m.Subject): // a second stored copy of a whole response: the first runs
		return key, nil, errCopyOfClaimed
	}
	return key, nil, nil // another path's input with the same content: as a redelivery
}

// errCopyOfClaimed: the input is a whole response stored a second time,
// after P changed, where the new P puts its id; the copy stored first
// holds the id and runs. Acknowledged, nothing of it runs.
var errCopyOfClaimed = errors.New("accumulate: a later copy of a claimed response")

// kvClaim is the claim of rid for tenant in the response-ids bucket, where
// accumulate wrote claims before they moved to the claimed subjects; it is
// read (never written) while the bucket may hold a live claim
// (kvClaimsLive), so a deployment pays the read only in the week after the
// upgrade. found reports a claim: then key is the key to use and old the
// earlier claim when the content differs.
//
// A tenant's response claimed before claims were per tenant is under the
// bare id: when that claim holds the same content (its hash covers the
// sender's tenant, so it is this tenant's), the response keeps the key it
// was first processed under, so a redelivery across the upgrade makes the
// same call ids (and idempotency keys) as before. A bare claim with other
// content is another tenant's, or this tenant's from before: it is not
// read as a conflict, which would tell one tenant of another's id.
func (a *Accumulate) kvClaim(ctx context.Context, tenant, rid string, c claim) (key string, old *claim, found bool, err error) {
	key = call.Key(tenant, rid)
	live, err := a.kvClaimsLive(ctx)
	if err != nil || !live {
		return key, nil, false, err
	}
	kv, err := a.idsBucket(ctx)
	if err != nil {
		return "", nil, false, err
	}
	if key != rid {
		legacy, err := readClaim(ctx, kv, rid)
		if err != nil {
			return "", nil, false, err
		}
		if legacy != nil && legacy.Kind == c.Kind && legacy.Hash == c.Hash {
			return rid, nil, true, nil
		}
	}
	held, err := readClaim(ctx, kv, key)
	switch {
	case err != nil:
		return "", nil, false, err
	case held == nil:
		return key, nil, false, nil
	case held.Kind == c.Kind && held.Hash == c.Hash:
		return key, nil, true, nil
	}
	return key, held, true, nil
}

// readClaim is the claim stored under key, nil when there is none.
func readClaim(ctx context.Context, kv jetstream.KeyValue, key string) (*claim, error) {
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("accumulate: read the claim %s: %w", key, err)
	}
	var c claim
	if err := json.Unmarshal(e.Value(), &c); err != nil {
		return &claim{Kind: "unreadable"}, nil // only accumulate writes here: refuse rather than guess
	}
	return &c, nil
}

func (a *Accumulate) idsBucket(ctx context.Context) (jetstream.KeyValue, error) {
	a.js.mu.Lock()
	defer a.js.mu.Unlock()
	if a.js.ids == nil {
		kv, err := a.JS.KeyValue(ctx, streams.BucketResponseIDs)
		if err != nil {
			return nil, fmt.Errorf("accumulate: bucket %s: %w (apply the topology: toolgate streams apply)", streams.BucketResponseIDs, err)
		}
		a.js.ids = kv
	}
	return a.js.ids, nil
}

// conflictWhy says why a response id was refused, for the producer and the
// dead letter.
func conflictWhy(rid string, old *claim, c claim) string {
	if old.Kind != c.Kind {
		return fmt.Sprintf("response id %s was used before (by a %s, at %s) and arrived again as a %s: nothing was replaced and nothing of this one runs; send it under a new response id",
			rid, old.Kind, old.At.Format(time.RFC3339), c.Kind)
	}
	return fmt.Sprintf("response id %s was used before (at %s) with other content or by another identity: nothing was replaced and nothing of this one runs; send it under a new response id",
		rid, old.At.Format(time.RFC3339))
}
