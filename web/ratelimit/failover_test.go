package ratelimit

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// syncBuffer is a log sink safe for the concurrent writes of a test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestFailoverRedisUnreachable(t *testing.T) {
	// Nothing listens on port 1: every call to Redis fails at once.
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { client.Close() })
	var logs syncBuffer
	store := NewFailoverStore(NewRedisStore(client), NewMemoryStore(), slog.New(slog.NewTextHandler(&logs, nil)))
	var counted atomic.Int64
	store.OnFallback = func() { counted.Add(1) }
	clock := newClock(t, "12:00:42")
	l := New(Config{Store: store, Now: clock.Now})

	lim := Limits{PerMinute: 2, PerDay: 10}
	checkAllow(t, l, "k", lim, summary{true, false, 1, 9, WindowMinute, 0})
	checkAllow(t, l, "k", lim, summary{true, false, 0, 8, WindowMinute, 0})
	checkAllow(t, l, "k", lim, summary{false, false, 0, 8, WindowMinute, 18 * time.Second})

	if store.Healthy() {
		t.Error("Healthy() = true with Redis unreachable")
	}
	if got := store.Fallbacks(); got != 3 {
		t.Errorf("Fallbacks() = %d, want 3", got)
	}
	if got := counted.Load(); got != 3 {
		t.Errorf("OnFallback called %d times, want 3", got)
	}
	if got := strings.Count(logs.String(), "REDIS_URL"); got != 1 {
		t.Errorf("log names REDIS_URL %d times, want once per outage:\n%s", got, logs.String())
	}
}

// flakyStore is a primary that fails while fail is set, and hangs (ignoring
// its context, as go-redis does by default) while hang is set.
type flakyStore struct {
	Store
	fail, hang atomic.Bool
	calls      atomic.Int64
}

func (f *flakyStore) Take(ctx context.Context, subject string, lim Limits, strikes int, now time.Time) (TakeResult, error) {
	f.calls.Add(1)
	if f.hang.Load() {
		time.Sleep(2 * time.Second)
	}
	if f.fail.Load() {
		return TakeResult{}, errors.New("dial tcp: connection refused")
	}
	if err := ctx.Err(); err != nil {
		return TakeResult{}, err
	}
	return f.Store.Take(ctx, subject, lim, strikes, now)
}

func TestFailoverRecovers(t *testing.T) {
	primary := &flakyStore{Store: NewMemoryStore()}
	var logs syncBuffer
	s := NewFailoverStore(primary, NewMemoryStore(), slog.New(slog.NewTextHandler(&logs, nil)))
	s.ProbeInterval = time.Hour // probes happen only when the test says so
	ctx, now, lim := context.Background(), time.Now(), Limits{PerMinute: 100, PerDay: 100}
	take := func() {
		t.Helper()
		if _, err := s.Take(ctx, "k", lim, 20, now); err != nil {
			t.Fatal(err)
		}
	}

	take()
	if !s.Healthy() || s.Fallbacks() != 0 {
		t.Fatalf("healthy primary: Healthy %v, Fallbacks %d", s.Healthy(), s.Fallbacks())
	}
	primary.fail.Store(true)
	take()
	take()
	if s.Healthy() || s.Fallbacks() != 2 || primary.calls.Load() != 2 {
		t.Fatalf("after failure: Healthy %v, Fallbacks %d, primary calls %d; want false, 2, 2 (no probe yet)",
			s.Healthy(), s.Fallbacks(), primary.calls.Load())
	}
	primary.fail.Store(false)
	take()
	if s.Healthy() {
		t.Fatal("back before the probe was due")
	}
	s.mu.Lock()
	s.nextProbe = time.Time{} // the probe interval has passed
	s.mu.Unlock()
	take()
	if !s.Healthy() || s.Fallbacks() != 3 {
		t.Fatalf("after a successful probe: Healthy %v, Fallbacks %d; want true, 3", s.Healthy(), s.Fallbacks())
	}
	if !strings.Contains(logs.String(), "answers again") || strings.Count(logs.String(), "unreachable") != 1 {
		t.Errorf("logs:\n%s", logs.String())
	}
}

func TestFailoverTimeout(t *testing.T) {
	primary := &flakyStore{Store: NewMemoryStore()}
	primary.hang.Store(true)
	s := NewFailoverStore(primary, NewMemoryStore(), slog.New(slog.DiscardHandler))
	s.Timeout = 20 * time.Millisecond
	start := time.Now()
	r, err := s.Take(context.Background(), "k", Limits{PerMinute: 1, PerDay: 1}, 20, time.Now())
	if err != nil || !r.Allowed {
		t.Fatalf("Take = %+v, %v; want allowed by the fallback", r, err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("a hung primary held the request %s", took)
	}
	if s.Healthy() {
		t.Error("Healthy() = true after a timeout")
	}
}

func TestFailoverCallerCancelled(t *testing.T) {
	primary := &flakyStore{Store: NewMemoryStore()}
	s := NewFailoverStore(primary, NewMemoryStore(), slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Take(ctx, "k", Limits{PerMinute: 1, PerDay: 1}, 20, time.Now()); err == nil {
		t.Error("Take with a cancelled context succeeded")
	}
	if !s.Healthy() || s.Fallbacks() != 0 {
		t.Errorf("a caller's cancellation marked the primary down: Healthy %v, Fallbacks %d", s.Healthy(), s.Fallbacks())
	}
}
