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

// claimID records rid as used by tenant with c, atomically (a key-value
// create under the response's key, call.Key: ids are claimed per tenant,
// so one tenant can neither squat another's id nor learn that it exists):
// the first arrival wins. It returns the key the response's calls are
// named by, and nil when rid is new for tenant or was claimed with the same
// content (a redelivery or a producer's retry: processed as before), or the
// earlier claim when the content differs. Without JetStream (handler tests)
// nothing is recorded.
//
// A tenant's response claimed before claims were per tenant is under the
// bare id: when that claim holds the same content (its hash covers the
// sender's tenant, so it is this tenant's), the response keeps the key it
// was first processed under, so a redelivery across the upgrade makes the
// same call ids (and idempotency keys) as before. A bare claim with other
// content is another tenant's, or this tenant's from before: it is not
// read as a conflict, which would tell one tenant of another's id.
func (a *Accumulate) claimID(ctx context.Context, tenant, rid string, c claim) (string, *claim, error) {
	key := call.Key(tenant, rid)
	if a.JS == nil {
		return key, nil, nil
	}
	kv, err := a.idsBucket(ctx)
	if err != nil {
		return "", nil, err
	}
	if key != rid {
		legacy, err := readClaim(ctx, kv, rid)
		if err != nil {
			return "", nil, err
		}
		if legacy != nil && legacy.Kind == c.Kind && legacy.Hash == c.Hash {
			return rid, nil, nil
		}
	}
	c.At = a.Now().UTC()
	data, err := json.Marshal(c)
	if err != nil {
		return "", nil, err
	}
	if _, err := kv.Create(ctx, key, data); err == nil {
		return key, nil, nil
	} else if !errors.Is(err, jetstream.ErrKeyExists) {
		return "", nil, fmt.Errorf("accumulate: claim response id %s: %w", rid, err)
	}
	old, err := readClaim(ctx, kv, key)
	if err != nil || old == nil {
		return "", nil, fmt.Errorf("accumulate: read the claim of response id %s: %w", rid, err) // expired between: the retry creates it
	}
	if old.Kind == c.Kind && old.Hash == c.Hash {
		return key, nil, nil
	}
	return key, old, nil
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
