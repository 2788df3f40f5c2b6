package ratelimit

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
)

// benchLimits never run out, so every Allow takes the full path.
var benchLimits = Limits{PerMinute: 1 << 40, PerDay: 1 << 40}

func benchAllow(b *testing.B, store Store) {
	l := New(Config{Store: store})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Allow(ctx, "key:1", benchLimits); err != nil {
			b.Fatal(err)
		}
	}
}

// benchAllowParallel spreads requests over 64 subjects, as many keys would,
// with 8 goroutines per core, as a busy server has many requests in flight.
func benchAllowParallel(b *testing.B, store Store) {
	l := New(Config{Store: store})
	ctx := context.Background()
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		subject := "key:" + strconv.FormatInt(next.Add(1)%64, 10)
		for pb.Next() {
			if _, err := l.Allow(ctx, subject, benchLimits); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkAllowMemory(b *testing.B) { benchAllow(b, NewMemoryStore()) }

func BenchmarkAllowMemoryParallel(b *testing.B) { benchAllowParallel(b, NewMemoryStore()) }

func BenchmarkAllowRedis(b *testing.B) {
	c := redisClient(b)
	benchAllow(b, NewRedisStore(c, WithKeyPrefix(redisPrefix(b, c))))
}

func BenchmarkAllowRedisParallel(b *testing.B) {
	c := redisClient(b)
	benchAllowParallel(b, NewRedisStore(c, WithKeyPrefix(redisPrefix(b, c))))
}

func BenchmarkAllowFailoverRedis(b *testing.B) {
	c := redisClient(b)
	benchAllow(b, NewFailoverStore(NewRedisStore(c, WithKeyPrefix(redisPrefix(b, c))), NewMemoryStore(), nil))
}
