package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Key lifetimes. Keys carry their window's number in their name, so a TTL
// only has to outlive the window (plus the hour of history for minute
// counts); being generous costs a little memory and lets tests run a fake
// clock against Redis' real one.
const (
	redisMinuteTTL     = 62 * 60          // minute counts back the 60-minute history
	redisRejectTTL     = 2 * 60           // minute strikes only matter in their minute
	redisDayTTL        = 2 * 24 * 60 * 60 // day counts, day strikes, 429s today
	redisDefaultPrefix = "petstore:rl:"
)

// takeScript is the whole decision, run atomically by Redis: however many
// instances share the server, no two requests both get a window's last unit.
//
// KEYS: minute count, day count, minute strikes, day strikes, 429s today.
// ARGV: per minute, per day, strikes for a ban, minute TTL, strike TTL, day TTL.
// Returns {allowed, minute used, day used, strikes, start ban}.
var takeScript = redis.NewScript(`
local m = tonumber(redis.call('GET', KEYS[1]) or '0')
local d = tonumber(redis.call('GET', KEYS[2]) or '0')
if m < tonumber(ARGV[1]) and d < tonumber(ARGV[2]) then
  m = redis.call('INCR', KEYS[1])
  if m == 1 then redis.call('EXPIRE', KEYS[1], ARGV[4]) end
  d = redis.call('INCR', KEYS[2])
  if d == 1 then redis.call('EXPIRE', KEYS[2], ARGV[6]) end
  return {1, m, d, 0, 0}
end
local rk, rttl = KEYS[3], ARGV[5]
if d >= tonumber(ARGV[2]) then rk, rttl = KEYS[4], ARGV[6] end
local r = redis.call('INCR', rk)
if r == 1 then redis.call('EXPIRE', rk, rttl) end
local strikes = r - 1
local limit = tonumber(ARGV[3])
if limit > 0 and strikes >= limit then
  redis.call('SET', rk, 1, 'EX', rttl)
  return {0, m, d, strikes, 1}
end
local l = redis.call('INCR', KEYS[5])
if l == 1 then redis.call('EXPIRE', KEYS[5], ARGV[6]) end
return {0, m, d, strikes, 0}
`)

// RedisStore is the Store shared by every instance through one Redis: one
// atomic script per decision keeps limits exact across processes.
type RedisStore struct {
	client redis.UniversalClient
	prefix string
}

// RedisOption configures a RedisStore.
type RedisOption func(*RedisStore)

// WithKeyPrefix sets the prefix of every key the store writes (default
// "petstore:rl:"). Tests use it to keep runs apart; it must not contain '{'.
func WithKeyPrefix(prefix string) RedisOption {
	return func(s *RedisStore) { s.prefix = prefix }
}

// NewRedisStore returns a Store kept in Redis. The client's own timeouts
// apply; put the store behind NewFailoverStore so an outage fails open.
func NewRedisStore(client redis.UniversalClient, opts ...RedisOption) *RedisStore {
	s := &RedisStore{client: client, prefix: redisDefaultPrefix}
	for _, o := range opts {
		o(s)
	}
	return s
}

// key names one counter. The subject sits in a hash tag so that all keys of
// a subject live in one Redis Cluster slot, as a multi-key script requires.
func (s *RedisStore) key(subject, kind string, id int64) string {
	return s.prefix + "{" + subject + "}:" + kind + ":" + strconv.FormatInt(id, 10)
}

// Take implements Store.
func (s *RedisStore) Take(ctx context.Context, subject string, lim Limits, strikes int, now time.Time) (TakeResult, error) {
	mid, did := minuteID(now), dayID(now)
	keys := []string{
		s.key(subject, "m", mid),
		s.key(subject, "d", did),
		s.key(subject, "sm", mid),
		s.key(subject, "sd", did),
		s.key(subject, "l", did),
	}
	v, err := takeScript.Run(ctx, s.client, keys,
		lim.PerMinute, lim.PerDay, strikes, redisMinuteTTL, redisRejectTTL, redisDayTTL).Int64Slice()
	if err != nil {
		return TakeResult{}, fmt.Errorf("redis take: %w", err)
	}
	if len(v) != 5 {
		return TakeResult{}, fmt.Errorf("redis take: script returned %d values, want 5", len(v))
	}
	return TakeResult{
		Allowed:  v[0] == 1,
		Counts:   Counts{Minute: v[1], Day: v[2]},
		Strikes:  v[3],
		StartBan: v[4] == 1,
	}, nil
}

// Peek implements Store.
func (s *RedisStore) Peek(ctx context.Context, subject string, now time.Time) (Counts, error) {
	v, err := s.mget(ctx, s.key(subject, "m", minuteID(now)), s.key(subject, "d", dayID(now)))
	if err != nil {
		return Counts{}, fmt.Errorf("redis peek: %w", err)
	}
	return Counts{Minute: v[0], Day: v[1]}, nil
}

// History implements Store.
func (s *RedisStore) History(ctx context.Context, subject string, now time.Time) (History, error) {
	mid, did := minuteID(now), dayID(now)
	keys := make([]string, 0, historyMinutes+2)
	for i := range historyMinutes {
		keys = append(keys, s.key(subject, "m", mid-historyMinutes+1+int64(i)))
	}
	keys = append(keys, s.key(subject, "d", did), s.key(subject, "l", did))
	v, err := s.mget(ctx, keys...)
	if err != nil {
		return History{}, fmt.Errorf("redis history: %w", err)
	}
	var h History
	copy(h.PerMinute[:], v)
	h.Day, h.Limited429 = v[historyMinutes], v[historyMinutes+1]
	return h, nil
}

// ClearStrikes implements Store.
func (s *RedisStore) ClearStrikes(ctx context.Context, subject string, now time.Time) error {
	err := s.client.Del(ctx, s.key(subject, "sm", minuteID(now)), s.key(subject, "sd", dayID(now))).Err()
	if err != nil {
		return fmt.Errorf("redis clear strikes: %w", err)
	}
	return nil
}

// mget reads counters, a missing key counting as zero.
func (s *RedisStore) mget(ctx context.Context, keys ...string) ([]int64, error) {
	vals, err := s.client.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(keys))
	for i, v := range vals {
		str, ok := v.(string)
		if !ok {
			continue // nil: the key does not exist (yet, or any more)
		}
		if out[i], err = strconv.ParseInt(str, 10, 64); err != nil {
			return nil, fmt.Errorf("key %s: %w", keys[i], err)
		}
	}
	return out, nil
}
