package idem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is the production store. Each claim is one Lua script round trip, so
// binding the call id and creating the record are atomic.
type Redis struct {
	c        redis.UniversalClient
	prefix   string
	wait     waitConf
	replicas replicaCache
}

// NewRedis returns a store on client c; keys start with "toolgate:".
// Writes wait for a replica when the primary has one (wait.go).
func NewRedis(c redis.UniversalClient) *Redis {
	return &Redis{c: c, prefix: "toolgate:", wait: waitConf{replicas: -1, timeout: time.Second}}
}

// Client is the underlying client (Dial made it).
func (s *Redis) Client() redis.UniversalClient { return s.c }

// Close closes the client.
func (s *Redis) Close() error { return s.c.Close() }

func (s *Redis) recKey(k string) string  { return s.prefix + "idem:" + k }
func (s *Redis) callKey(k string) string { return s.prefix + "call:" + k }

// claimScript: KEYS[1] record, KEYS[2] call binding; ARGV[1] record json,
// ARGV[2] fingerprint, ARGV[3] retention ms.
var claimScript = redis.NewScript(`
local bound = redis.call('GET', KEYS[2])
if bound and bound ~= ARGV[2] then return {'conflict', bound} end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[3]) then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
  return {'claimed', ''}
end
return {'exists', redis.call('GET', KEYS[1]) or ''}
`)

// Claim implements Store.
func (s *Redis) Claim(ctx context.Context, rec Record, retention time.Duration) (Record, bool, error) {
	rec.State = Pending
	data, err := json.Marshal(rec)
	if err != nil {
		return Record{}, false, fmt.Errorf("idem: %w", err)
	}
	var cmd *redis.Cmd
	if len(rec.Charges) == 0 { // a call under no limit: the script is as it always was
		cmd, err = s.runWrite(ctx, claimScript, s.scriptKeys(rec.Key, rec.CallID), data, rec.Fingerprint, retention.Milliseconds())
	} else {
		keys, args := s.claimArgs(rec, data, retention) // redis_limit.go
		cmd, err = s.runWrite(ctx, claimLimited, keys, args...)
	}
	if err != nil {
		return Record{}, false, fmt.Errorf("idem: redis claim: %w", err)
	}
	res, err := cmd.StringSlice()
	if err != nil {
		return Record{}, false, fmt.Errorf("idem: redis claim: %w", err)
	}
	switch res[0] {
	case "claimed":
		for i := range rec.Charges { // claimLimited answers each key's usage after the charge
			if i+2 < len(res) {
				rec.Charges[i].Used, _ = strconv.ParseInt(res[i+2], 10, 64)
			}
		}
		return rec, true, nil
	case "conflict":
		return Record{}, false, ErrConflict
	case "limited":
		return Record{}, false, limited(rec, res)
	}
	return existingFor(rec, Decode(rec.Key, []byte(res[1]))), false, nil
}

// completeSplice: KEYS[1] record; ARGV[1] owner, ARGV[2] the completed
// fields as JSON members (",\"ok\":...,\"result\":..."), ARGV[3] retention
// ms. It checks the claim and splices the answer into the pending record in
// one round trip: the pending record has none of those members yet, and the
// result's bytes are kept exactly as the executor sent them.
var completeSplice = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then return 'missing' end
local rec = cjson.decode(cur)
if rec.owner ~= ARGV[1] or rec.state ~= 'pending' then return 'not_owner' end
local done = string.gsub(cur, '"state":"pending"', '"state":"completed"', 1)
done = string.sub(done, 1, -2) .. ARGV[2] .. '}'
redis.call('SET', KEYS[1], done, 'PX', ARGV[3])
return 'ok'
`)

// completion holds the members Complete adds to a pending record; their
// names are Record's.
type completion struct {
	OK          bool            `json:"ok,omitempty"`
	Result      json.RawMessage `json:"result,omitempty"`
	Error       string          `json:"error,omitempty"`
	CompletedAt time.Time       `json:"completed_at"`
}

// Complete implements Store.
func (s *Redis) Complete(ctx context.Context, key, owner string, ok bool, result json.RawMessage, errText string, retention time.Duration) error {
	members, err := json.Marshal(completion{OK: ok, Result: result, Error: errText, CompletedAt: time.Now().UTC()})
	if err != nil {
		return fmt.Errorf("idem: %w", err)
	}
	members[0] = ',' // {"ok":...} -> ,"ok":... spliced before the record's closing brace
	members = members[:len(members)-1]
	cmd, err := s.runWrite(ctx, completeSplice, []string{s.recKey(key)}, owner, members, retention.Milliseconds())
	if err != nil {
		return fmt.Errorf("idem: redis complete: %w", err)
	}
	res, err := cmd.Text()
	if err != nil {
		return fmt.Errorf("idem: redis complete: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("idem: complete %s (%s): %w", key, res, ErrNotOwner)
	}
	return nil
}

// Release implements Store: the record is deleted and its charges given
// back (redis_limit.go), in one script.
func (s *Redis) Release(ctx context.Context, key, owner string) error {
	res, err := releaseScript.Run(ctx, s.c, []string{s.recKey(key)}, owner, s.prefix).Text()
	if err != nil {
		return fmt.Errorf("idem: redis: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("idem: %s (%s): %w", key, res, ErrNotOwner)
	}
	return nil
}

// Get implements Store.
func (s *Redis) Get(ctx context.Context, key string) (Record, bool, error) {
	data, err := s.c.Get(ctx, s.recKey(key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, fmt.Errorf("idem: redis get: %w", err)
	}
	return Decode(key, data), true, nil
}
