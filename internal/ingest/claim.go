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

// claimID records rid as used with c, atomically (a key-value create): the
// first arrival wins. It returns nil when rid is new or was claimed with the
// same content (a redelivery or a producer's retry: processed as before),
// and the earlier claim when the content differs. Without JetStream
// (handler tests) nothing is recorded.
func (a *Accumulate) claimID(ctx context.Context, rid string, c claim) (*claim, error) {
	if a.JS == nil {
		return nil, nil
	}
	kv, err := a.idsBucket(ctx)
	if err != nil {
		return nil, err
	}
	c.At = a.Now().UTC()
	data, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	if _, err := kv.Create(ctx, rid, data); err == nil {
		return nil, nil
	} else if !errors.Is(err, jetstream.ErrKeyExists) {
		return nil, fmt.Errorf("accumulate: claim response id %s: %w", rid, err)
	}
	e, err := kv.Get(ctx, rid)
	if err != nil {
		return nil, fmt.Errorf("accumulate: read the claim of response id %s: %w", rid, err) // expired between: the retry creates it
	}
	var old claim
	if err := json.Unmarshal(e.Value(), &old); err != nil {
		return &claim{Kind: "unreadable"}, nil // only accumulate writes here: refuse rather than guess
	}
	if old.Kind == c.Kind && old.Hash == c.Hash {
		return nil, nil
	}
	return &old, nil
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
