package idem

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/internal/limit"
)

// A limit's usage in Redis, per limit NAME and key K (limit.KeyOf bounds
// K): "lim:NAME:k:K" is a sorted set of the window's charges (member
// "CHARGE|WEIGHT", score the charge's time in ms by the Redis server's
// clock, so replicas of execute with skewed clocks agree), "limw:NAME:k:K"
// their summed weight; "limi:NAME" scores each key by its last charge;
// "limo:NAME" and "limow:NAME" are the overflow that keys evicted past
// max_keys leave their charges in. Every key expires with its window.
func (s *Redis) limKeys(c limit.Charge) []string {
	return []string{
		s.prefix + "lim:" + c.Limit + ":k:" + c.Key,
		s.prefix + "limw:" + c.Limit + ":k:" + c.Key,
		s.prefix + "limi:" + c.Limit,
		s.prefix + "limo:" + c.Limit,
		s.prefix + "limow:" + c.Limit,
	}
}

// limLua is shared by the scripts that read limits. trim drops a set's
// charges older than cutoff and returns what is left of its weight.
const limLua = `
local function trim(z, w, cutoff)
  local old = redis.call('ZRANGEBYSCORE', z, '-inf', cutoff)
  if #old > 0 then
    local sum = 0
    for _, m in ipairs(old) do sum = sum + tonumber(string.match(m, '|(%d+)$')) end
    redis.call('ZREMRANGEBYSCORE', z, '-inf', cutoff)
    if redis.call('DECRBY', w, sum) <= 0 then redis.call('DEL', w) end
  end
  return tonumber(redis.call('GET', w) or '0')
end
local function nowms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`

// claimLimited is claimScript for a call under limits, in the same one
// round trip: KEYS[1] record, KEYS[2] call binding, then five keys per
// limit (limKeys); ARGV[1] record json, ARGV[2] fingerprint, ARGV[3]
// retention ms, ARGV[4] the number of limits, ARGV[5] the charge's id,
// ARGV[6] the key prefix, then per limit: window ms, max, weight, max keys,
// name, key. An existing record charges nothing; otherwise every limit is
// checked first and the call is either refused by the first full one with
// nothing written but expired charges dropped, or charged on every limit
// and claimed.
var claimLimited = redis.NewScript(limLua + `
local bound = redis.call('GET', KEYS[2])
if bound and bound ~= ARGV[2] then return {'conflict', bound} end
local cur = redis.call('GET', KEYS[1])
if cur then return {'exists', cur} end
local n, id, p = tonumber(ARGV[4]), ARGV[5], ARGV[6]
local now = nowms()
local used, out = {}, {'claimed', ''}
for i = 1, n do
  local a, k = 7 + (i - 1) * 6, 2 + (i - 1) * 5
  local win, max, wt = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local cutoff = now - win
  local used = trim(KEYS[k + 1], KEYS[k + 2], cutoff) + trim(KEYS[k + 4], KEYS[k + 5], cutoff)
  if used + wt > max then
    local at = -1
    if wt <= max then
      local es = {}
      for _, z in ipairs({KEYS[k + 1], KEYS[k + 4]}) do
        local r = redis.call('ZRANGE', z, 0, -1, 'WITHSCORES')
        for j = 1, #r, 2 do es[#es + 1] = {tonumber(r[j + 1]), tonumber(string.match(r[j], '|(%d+)$'))} end
      end
      table.sort(es, function(x, y) return x[1] < y[1] end)
      local need, freed = used + wt - max, 0
      for _, e in ipairs(es) do
        freed = freed + e[2]
        if freed >= need then at = e[1] + win + 1 break end
      end
    end
    return {'limited', tostring(i), tostring(at), tostring(used)}
  end
end
for i = 1, n do
  local a, k = 7 + (i - 1) * 6, 2 + (i - 1) * 5
  local win, wt, maxkeys, name, key = ARGV[a], ARGV[a + 2], tonumber(ARGV[a + 3]), ARGV[a + 4], ARGV[a + 5]
  redis.call('ZADD', KEYS[k + 1], now, id .. '|' .. wt)
  used[i] = redis.call('INCRBY', KEYS[k + 2], wt) + tonumber(redis.call('GET', KEYS[k + 5]) or '0')
  redis.call('PEXPIRE', KEYS[k + 1], win)
  redis.call('PEXPIRE', KEYS[k + 2], win)
  redis.call('ZADD', KEYS[k + 3], now, key)
  redis.call('PEXPIRE', KEYS[k + 3], win)
  if redis.call('ZCARD', KEYS[k + 3]) > maxkeys then
    local old = redis.call('ZRANGE', KEYS[k + 3], 0, 0)[1]
    if old ~= key then
      local oz, ow = p .. 'lim:' .. name .. ':k:' .. old, p .. 'limw:' .. name .. ':k:' .. old
      local r = redis.call('ZRANGE', oz, 0, -1, 'WITHSCORES')
      for j = 1, #r, 2 do redis.call('ZADD', KEYS[k + 4], r[j + 1], r[j]) end
      redis.call('INCRBY', KEYS[k + 5], tonumber(redis.call('GET', ow) or '0'))
      redis.call('PEXPIRE', KEYS[k + 4], win)
      redis.call('PEXPIRE', KEYS[k + 5], win)
      redis.call('DEL', oz, ow)
      redis.call('ZREM', KEYS[k + 3], old)
    end
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
for i = 1, n do out[i + 2] = tostring(used[i]) end
return out
`)

// claimArgs are the KEYS and ARGV of claimLimited for rec.
func (s *Redis) claimArgs(rec Record, data []byte, retention time.Duration) ([]string, []any) {
	keys := s.scriptKeys(rec.Key, rec.CallID)
	args := []any{data, rec.Fingerprint, retention.Milliseconds(), len(rec.Charges), rec.Key, s.prefix}
	for _, c := range rec.Charges {
		keys = append(keys, s.limKeys(c)...)
		args = append(args, c.Window.Milliseconds(), c.Max, c.Weight, c.MaxKeys, c.Limit, c.Key)
	}
	return keys, args
}

// limited reads claimLimited's refusal.
func limited(rec Record, res []string) error {
	i, _ := strconv.Atoi(res[1])
	if i < 1 || i > len(rec.Charges) || len(res) < 4 {
		return fmt.Errorf("idem: redis claim: unexpected answer %q", res)
	}
	c := rec.Charges[i-1]
	le := &LimitError{Limit: c.Limit, Key: c.Key, Max: c.Max}
	le.Used, _ = strconv.ParseInt(res[3], 10, 64)
	if at, _ := strconv.ParseInt(res[2], 10, 64); at > 0 {
		le.PassAt = time.UnixMilli(at)
	}
	return le
}

// releaseScript: KEYS[1] record; ARGV[1] owner, ARGV[2] key prefix. It
// deletes a pending record held by owner and gives back its charges, from
// the key's set or, if the key was evicted since, the limit's overflow.
var releaseScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then return 'missing' end
local rec = cjson.decode(cur)
if rec.owner ~= ARGV[1] or rec.state ~= 'pending' then return 'not_owner' end
local p = ARGV[2]
if type(rec.charges) == 'table' then
  for _, c in ipairs(rec.charges) do
    local m = rec.key .. '|' .. string.format('%d', c.weight)
    if redis.call('ZREM', p .. 'lim:' .. c.limit .. ':k:' .. c.key, m) == 1 then
      if redis.call('DECRBY', p .. 'limw:' .. c.limit .. ':k:' .. c.key, c.weight) <= 0 then redis.call('DEL', p .. 'limw:' .. c.limit .. ':k:' .. c.key) end
    elseif redis.call('ZREM', p .. 'limo:' .. c.limit, m) == 1 then
      if redis.call('DECRBY', p .. 'limow:' .. c.limit, c.weight) <= 0 then redis.call('DEL', p .. 'limow:' .. c.limit) end
    end
  end
end
redis.call('DEL', KEYS[1])
return 'ok'
`)

// LimitUsage implements Limits.
func (s *Redis) LimitUsage(ctx context.Context, c limit.Charge) (Usage, error) {
	ks := s.limKeys(c)
	res, err := usageScript.Run(ctx, s.c, ks, c.Window.Milliseconds()).Int64Slice()
	if err != nil {
		return Usage{}, fmt.Errorf("idem: redis limit usage: %w", err)
	}
	u := Usage{Used: res[0], Charges: int(res[1]), Overflow: res[3], Keys: int(res[4])}
	if res[2] > 0 {
		u.Oldest = time.UnixMilli(res[2])
	}
	return u, nil
}

// usageScript reads one key's usage without writing: KEYS limKeys, ARGV[1]
// window ms. It answers {weight, charges, oldest ms, overflow weight, keys}.
var usageScript = redis.NewScript(limLua + `
local cutoff = nowms() - tonumber(ARGV[1])
local function sum(z)
  local s, c, oldest = 0, 0, 0
  local r = redis.call('ZRANGEBYSCORE', z, '(' .. cutoff, '+inf', 'WITHSCORES')
  for j = 1, #r, 2 do
    s = s + tonumber(string.match(r[j], '|(%d+)$')); c = c + 1
    if oldest == 0 then oldest = tonumber(r[j + 1]) end
  end
  return s, c, oldest
end
local u, c, oldest = sum(KEYS[1])
local o = sum(KEYS[4])
return {u, c, oldest, o, redis.call('ZCOUNT', KEYS[3], '(' .. cutoff, '+inf')}
`)
