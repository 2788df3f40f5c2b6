package ratelimit

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// redisClient connects to PETSTORE_TEST_REDIS_URL. Without it the test is
// skipped, except in CI, where Redis is required.
func redisClient(tb testing.TB) *redis.Client {
	tb.Helper()
	url := os.Getenv("PETSTORE_TEST_REDIS_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal("PETSTORE_TEST_REDIS_URL is not set; CI requires the Redis tests")
		}
		tb.Skip("PETSTORE_TEST_REDIS_URL not set (e.g. redis://127.0.0.1:6379/0): skipping Redis tests")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatalf("PETSTORE_TEST_REDIS_URL: %v", err)
	}
	c := redis.NewClient(opt)
	tb.Cleanup(func() { c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		tb.Fatalf("PETSTORE_TEST_REDIS_URL: %v", err)
	}
	return c
}

var redisPrefixes atomic.Int64

// redisPrefix returns a key prefix no other test uses, and deletes its keys
// when the test ends.
func redisPrefix(tb testing.TB, c *redis.Client) string {
	prefix := fmt.Sprintf("petstore-test:%d:%d:", os.Getpid(), redisPrefixes.Add(1))
	tb.Cleanup(func() {
		ctx := context.Background()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			tb.Errorf("clean up %s*: %v", prefix, err)
			return
		}
		if len(keys) > 0 {
			if err := c.Del(ctx, keys...).Err(); err != nil {
				tb.Errorf("clean up %s*: %v", prefix, err)
			}
		}
	})
	return prefix
}

func TestLimiterRedis(t *testing.T) {
	c := redisClient(t)
	testLimiter(t, func(t *testing.T) Store {
		return NewRedisStore(c, WithKeyPrefix(redisPrefix(t, c)))
	})
}

func TestRedisKeysExpire(t *testing.T) {
	c := redisClient(t)
	prefix := redisPrefix(t, c)
	l := New(Config{Store: NewRedisStore(c, WithKeyPrefix(prefix)), Now: newClock(t, "12:00:42").Now})
	lim := Limits{PerMinute: 1, PerDay: 10}
	mustAllow(t, l, "k", lim)
	mustAllow(t, l, "k", lim) // a 429: strikes and 429s-today keys too
	ctx := context.Background()
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 4 {
		t.Errorf("keys = %q, want minute, day, minute strikes and 429s today", keys)
	}
	for _, k := range keys {
		if ttl := c.TTL(ctx, k).Val(); ttl <= 0 {
			t.Errorf("key %s has TTL %s, want one", k, ttl)
		}
	}
}
