package toolserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
)

// The durable record of the requests a Server took: one key per tool and
// idempotency key in a JetStream key-value bucket (wire.ExecReplayBucket
// unless ReplayBucket names another), created before the tool runs and
// completed with its answer. A shared bucket, not a file: every replica of
// an executor (a NATS queue group) sees the same records, so a request
// captured from one is refused by all, and they survive restarts.

// Record states.
const (
	recordRunning = "running" // taken; the tool runs, or its run was cut short
	recordDone    = "done"    // the tool answered: Reply
)

// record is one key's value in the bucket.
type record struct {
	State  string          `json:"state"`
	CallID string          `json:"call_id"`
	At     time.Time       `json:"at"`
	Reply  json.RawMessage `json:"reply,omitempty"`
}

// storeTimeout bounds each bucket operation.
const storeTimeout = 5 * time.Second

// ReplayBucket keeps the durable record of the requests the Server took in
// kv instead of the bucket wire.ExecReplayBucket on the Server's own
// connection: for a bucket in another JetStream domain or account. Every
// partition a request names (wire.HeaderReplayPartition) is then kept in
// kv: one bucket, as without partitions.
func ReplayBucket(kv jetstream.KeyValue) Option {
	return func(o *options) error {
		if kv == nil {
			return errors.New("toolserver: ReplayBucket: nil bucket")
		}
		o.replay = kv
		return nil
	}
}

// bindReplay finds the default bucket (partition 0) on nc, and keeps nc's
// JetStream for the partitions' buckets.
func bindReplay(nc *nats.Conn) (*replayBuckets, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("toolserver: replay bucket: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	kv, err := js.KeyValue(ctx, wire.ExecReplayBucket)
	if err != nil {
		if last := nc.LastError(); errors.Is(last, nats.ErrPermissionViolation) {
			err = fmt.Errorf("%w (%v)", err, last)
		}
		return nil, fmt.Errorf("toolserver: the key-value bucket %s, where this executor records the requests it took so that none runs twice: %w; "+
			"create it with `toolgate streams apply` (toolgate up does), and let the executor's NATS user read and write it "+
			"(toolgate's executor-<group> users may; see the README's credential table)", wire.ExecReplayBucket, err)
	}
	return &replayBuckets{js: js, bound: map[int]jetstream.KeyValue{0: kv}}, nil
}

var plainKey = regexp.MustCompile(`^[0-9a-f]{64}$`)

// recordKey is the bucket key of tool's request with idempotency key key:
// <tool>.<key> for the execute gate's sha256 keys, <tool>.s<sha256 of key>
// for any other (a bucket key allows few characters).
func recordKey(tool, key string) string {
	if plainKey.MatchString(key) {
		return tool + "." + key
	}
	sum := sha256.Sum256([]byte(key))
	return tool + ".s" + hex.EncodeToString(sum[:])
}

// takeIn is take in the bucket of partition part; kv is that bucket, for
// complete.
func (s *Server) takeIn(part int, tool string, c Call) (rec record, rev uint64, taken bool, kv jetstream.KeyValue, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	kv, err = s.replay.bucket(ctx, part)
	cancel()
	if err != nil {
		return record{}, 0, false, nil, err
	}
	rec, rev, taken, err = take(kv, tool, c)
	return rec, rev, taken, kv, err
}

// take creates the record of a request about to run. It returns taken true
// when this delivery may run the tool, else the existing record.
func take(kv jetstream.KeyValue, tool string, c Call) (rec record, rev uint64, taken bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	k := recordKey(tool, c.IdempotencyKey)
	v, _ := json.Marshal(record{State: recordRunning, CallID: c.ID, At: time.Now().UTC()})
	rev, err = kv.Create(ctx, k, v)
	if err == nil {
		return record{}, rev, true, nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return record{}, 0, false, err
	}
	rec, found, err := read(ctx, kv, tool, c.IdempotencyKey)
	if err != nil {
		return record{}, 0, false, err
	}
	if !found { // gone between the two calls (its TTL): never run on a guess
		rec = record{State: recordRunning}
	}
	return rec, 0, false, nil
}

// complete stores the tool's answer in the record taken at rev. An answer
// too large to keep is kept as its outcome without the result.
func complete(kv jetstream.KeyValue, tool string, c Call, rev uint64, reply []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	k := recordKey(tool, c.IdempotencyKey)
	v, _ := json.Marshal(record{State: recordDone, CallID: c.ID, At: time.Now().UTC(), Reply: reply})
	_, err := kv.Update(ctx, k, v, rev)
	if err == nil || !errors.Is(err, nats.ErrMaxPayload) && !isTooLarge(err) {
		return err
	}
	var r wire.ExecReply
	_ = json.Unmarshal(reply, &r)
	short, _ := json.Marshal(wire.ExecReply{OK: r.OK, Error: "toolserver: the result was too large to keep in " + kv.Bucket() + "; the tool ran once and is not run again"})
	v, _ = json.Marshal(record{State: recordDone, CallID: c.ID, At: time.Now().UTC(), Reply: short})
	_, err = kv.Update(ctx, k, v, rev)
	return err
}

// isTooLarge: the stream refused the record for its size (10054,
// JSStreamMessageExceedsMaximumErr).
func isTooLarge(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == 10054
}

// read returns the record of tool's idempotency key key.
func read(ctx context.Context, kv jetstream.KeyValue, tool, key string) (record, bool, error) {
	e, err := kv.Get(ctx, recordKey(tool, key))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		return record{}, false, nil
	case err != nil:
		return record{}, false, err
	}
	var rec record
	if err := json.Unmarshal(e.Value(), &rec); err != nil || (rec.State != recordRunning && rec.State != recordDone) {
		// Not a record this package wrote: never taken for "not run".
		return record{State: recordRunning}, true, nil
	}
	return rec, true, nil
}
