package ratelimit

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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

// newTestFailover puts primary behind an in-process fallback, logging to
// the returned buffer and counting OnFallback calls.
func newTestFailover(primary Store) (*FailoverStore, *syncBuffer, *atomic.Int64) {
	var logs syncBuffer
	s := NewFailoverStore(primary, NewMemoryStore(), slog.New(slog.NewTextHandler(&logs, nil)))
	var counted atomic.Int64
	s.OnFallback = func() { counted.Add(1) }
	return s, &logs, &counted
}

// runProbes runs s.Run until the test ends.
func runProbes(t *testing.T, s *FailoverStore) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// pingClient is the probe's own connection to addr, as cmd/petstore makes it.
func pingClient(t *testing.T, addr string) func(context.Context) error {
	c := redis.NewClient(&redis.Options{
		Addr: addr, PoolSize: 1, MaxRetries: -1, DialerRetries: 1, ContextTimeoutEnabled: true,
	})
	t.Cleanup(func() { c.Close() })
	return func(ctx context.Context) error { return c.Ping(ctx).Err() }
}

// pinnedClock is a test clock stopped 42 seconds into a minute.
func pinnedClock(tb testing.TB) func() time.Time {
	return newClock(tb, "12:00:42").Now
}

func TestFailoverRedisRefused(t *testing.T) {
	// Nothing listens on port 1: every call and ping is refused at once.
	client := testClient(t, "127.0.0.1:1", time.Second)
	store, logs, counted := newTestFailover(NewRedisStore(client))
	store.Ping = pingClient(t, "127.0.0.1:1")
	clock := pinnedClock(t)
	l := New(Config{Store: store, Now: clock})

	lim := Limits{PerMinute: 2, PerDay: 10}
	// The first call finds the outage itself; the probe confirms it
	// without a second warning.
	checkAllow(t, l, "k", lim, summary{true, false, 1, 9, WindowMinute, 0})
	if store.Healthy() {
		t.Fatal("Healthy() = true after a refused call")
	}
	if store.Probe(context.Background()) {
		t.Fatal("Probe() = true with Redis refusing connections")
	}
	// Counting goes on in process, exactly.
	checkAllow(t, l, "k", lim, summary{true, false, 0, 8, WindowMinute, 0})
	checkAllow(t, l, "k", lim, summary{false, false, 0, 8, WindowMinute, 18 * time.Second})

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

// slowStore answers every call, one at a time and each after delay: a
// Redis that is there but slow, with one connection for a whole burst.
type slowStore struct {
	Store
	delay time.Duration
	mu    sync.Mutex
}

func (s *slowStore) Take(ctx context.Context, subject string, lim Limits, strikes int, now time.Time) (TakeResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	time.Sleep(s.delay)
	return s.Store.Take(ctx, subject, lim, strikes, now)
}

func TestFailoverSlowRedisStaysExact(t *testing.T) {
	// 150 concurrent requests for 50 units, one at a time, 10ms each: the
	// last waits 1.5s, longer than a probe may take. Slow is not down, so
	// each waits for its turn and exactly 50 pass.
	c := redisClient(t)
	prefix := redisPrefix(t, c)
	calls := redis.NewClient(&redis.Options{Addr: c.Options().Addr, DB: c.Options().DB, PoolSize: 1, PoolTimeout: 30 * time.Second, MaxRetries: -1})
	t.Cleanup(func() { calls.Close() })
	store, logs, counted := newTestFailover(&slowStore{Store: NewRedisStore(calls, WithKeyPrefix(prefix)), delay: 10 * time.Millisecond})
	store.Ping = pingClient(t, c.Options().Addr)
	store.ProbeInterval, store.ProbeTimeout, store.MaxWait = 10*time.Millisecond, time.Second, time.Minute
	runProbes(t, store)
	clock := pinnedClock(t)
	l := New(Config{Store: store, Strikes: 1 << 30, Now: clock})

	began := time.Now()
	got := allowConcurrently(t, []*Limiter{l}, "key:1", Limits{PerMinute: 50, PerDay: 100000}, 150)
	took := time.Since(began)
	if got != 50 {
		t.Errorf("allowed %d of 150, want exactly 50", got)
	}
	if took < 150*10*time.Millisecond {
		t.Errorf("the burst took %s: the calls did not queue", took)
	}
	if !store.Healthy() || store.Fallbacks() != 0 || counted.Load() != 0 {
		t.Errorf("a slow Redis was taken for down: Healthy %v, Fallbacks %d, OnFallback %d\n%s",
			store.Healthy(), store.Fallbacks(), counted.Load(), logs.String())
	}
	if n, err := NewRedisStore(c, WithKeyPrefix(prefix)).Peek(context.Background(), "key:1", clock()); err != nil || n.Minute != 50 {
		t.Errorf("Redis counts %+v (%v), want 50 this minute", n, err)
	}
	t.Logf("150 decisions in %s, one at a time", took.Round(time.Millisecond))
}

func TestFailoverHungRedis(t *testing.T) {
	// Redis accepts connections and never answers. The calls' client
	// would wait a minute; once Redis has answered nothing for 300ms, the
	// next ping without an answer (100ms) releases every call waiting on
	// Redis to the fallback.
	addr := fakeRedis(t, hang)
	store, logs, counted := newTestFailover(NewRedisStore(testClient(t, addr, time.Minute)))
	store.Ping = pingClient(t, addr)
	store.ProbeInterval, store.ProbeTimeout, store.DownAfter, store.MaxWait = 50*time.Millisecond, 100*time.Millisecond, 300*time.Millisecond, time.Minute
	runProbes(t, store)

	lim := Limits{PerMinute: 100, PerDay: 100}
	now := pinnedClock(t)()
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			began := time.Now()
			r, err := store.Take(context.Background(), "k", lim, 20, now)
			if err != nil || !r.Allowed {
				t.Errorf("Take %d = %+v, %v; want allowed by the fallback", i, r, err)
			}
			if took := time.Since(began); took > 3*time.Second {
				t.Errorf("Take %d was held %s by a hung Redis", i, took)
			}
		})
	}
	wg.Wait()
	if store.Healthy() {
		t.Error("Healthy() = true while Redis hangs")
	}
	// Once down, calls do not wait on Redis at all.
	began := time.Now()
	if _, err := store.Take(context.Background(), "k", lim, 20, now); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("a call during the outage took %s", took)
	}
	if got := counted.Load(); got != 11 {
		t.Errorf("OnFallback called %d times, want 11", got)
	}
	if got := strings.Count(logs.String(), "unreachable"); got != 1 {
		t.Errorf("%d outage warnings, want 1:\n%s", got, logs.String())
	}
}

// errRefused is the error of a connection to a port nobody listens on.
var errRefused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

// flakyStore is a primary that returns err while it is set and holds calls
// (ignoring their context, as go-redis does by default) while hang is set.
type flakyStore struct {
	Store
	calls atomic.Int64
	hang  atomic.Bool
	mu    sync.Mutex
	err   error
}

func (f *flakyStore) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

func (f *flakyStore) Take(ctx context.Context, subject string, lim Limits, strikes int, now time.Time) (TakeResult, error) {
	f.calls.Add(1)
	if f.hang.Load() {
		time.Sleep(2 * time.Second)
	}
	f.mu.Lock()
	err := f.err
	f.mu.Unlock()
	if err != nil {
		return TakeResult{}, fmt.Errorf("redis take: %w", err)
	}
	return f.Store.Take(ctx, subject, lim, strikes, now)
}

// switchPing is a Ping that fails with err while it is set.
type switchPing struct {
	mu  sync.Mutex
	err error
}

func (p *switchPing) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.err = err
}

func (p *switchPing) Ping(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}
