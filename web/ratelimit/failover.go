package ratelimit

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Failover defaults.
const (
	DefaultFailoverTimeout = 250 * time.Millisecond
	DefaultProbeInterval   = time.Second
)

// errPrimaryTimeout stands for an answer that did not come within Timeout.
var errPrimaryTimeout = errors.New("rate-limit counter store did not answer in time")

// FailoverStore uses a primary Store (Redis) and, while it fails, a
// fallback (in process): SPEC §13 wants an unreachable Redis to fail open to
// local counting, not to fail requests. It logs one warning per outage and
// one notice when the primary is back, and while it is down lets one call
// per ProbeInterval try it again, so shared counting resumes by itself.
//
// Set the exported fields before first use.
type FailoverStore struct {
	// OnFallback, when set, is called for every call the fallback answers,
	// so the app can count them in its metrics.
	OnFallback func()
	// Timeout bounds each call to the primary; a slower answer counts as a
	// failure. Default 250ms. It holds even when the Redis client ignores
	// context deadlines (go-redis does, unless ContextTimeoutEnabled).
	Timeout time.Duration
	// ProbeInterval is how often, while the primary is down, one call tries
	// it again. Default 1s.
	ProbeInterval time.Duration
	// MaxWait bounds a call that is slow while the primary keeps answering
	// other calls (a burst queueing for pooled connections): such a call
	// is waited for rather than failed open. Default 8×Timeout.
	MaxWait time.Duration

	primary, fallback Store
	logger            *slog.Logger
	fallbacks         atomic.Int64
	// lastAnswer is when the primary last answered any call (Unix ns).
	lastAnswer atomic.Int64

	mu        sync.Mutex
	down      bool
	probing   bool
	nextProbe time.Time
}

// NewFailoverStore returns a Store that uses primary and falls back to
// fallback while primary fails. logger receives the outage warnings; nil
// means slog.Default().
func NewFailoverStore(primary, fallback Store, logger *slog.Logger) *FailoverStore {
	if logger == nil {
		logger = slog.Default()
	}
	return &FailoverStore{primary: primary, fallback: fallback, logger: logger}
}

// Healthy reports whether the primary answered the last time it was asked,
// for /readyz.
func (s *FailoverStore) Healthy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.down
}

// Fallbacks returns the number of calls the fallback has answered.
func (s *FailoverStore) Fallbacks() int64 { return s.fallbacks.Load() }

// Take implements Store.
func (s *FailoverStore) Take(ctx context.Context, subject string, lim Limits, strikes int, now time.Time) (TakeResult, error) {
	return failover(ctx, s, func(ctx context.Context, st Store) (TakeResult, error) {
		return st.Take(ctx, subject, lim, strikes, now)
	})
}

// Peek implements Store.
func (s *FailoverStore) Peek(ctx context.Context, subject string, now time.Time) (Counts, error) {
	return failover(ctx, s, func(ctx context.Context, st Store) (Counts, error) {
		return st.Peek(ctx, subject, now)
	})
}

// History implements Store.
func (s *FailoverStore) History(ctx context.Context, subject string, now time.Time) (History, error) {
	return failover(ctx, s, func(ctx context.Context, st Store) (History, error) {
		return st.History(ctx, subject, now)
	})
}

// ClearStrikes implements Store. Strikes may be in either store, so it
// clears the fallback too; only the primary's failure is reported.
func (s *FailoverStore) ClearStrikes(ctx context.Context, subject string, now time.Time) error {
	_ = s.fallback.ClearStrikes(ctx, subject, now)
	_, err := failover(ctx, s, func(ctx context.Context, st Store) (struct{}, error) {
		return struct{}{}, st.ClearStrikes(ctx, subject, now)
	})
	return err
}

// failover runs call on the primary when it is up (or due for a probe) and
// on the fallback otherwise or when the primary fails.
func failover[T any](ctx context.Context, s *FailoverStore, call func(context.Context, Store) (T, error)) (T, error) {
	if s.usePrimary() {
		v, err := callPrimary(ctx, s, call)
		if err == nil {
			s.markUp()
			return v, nil
		}
		if ctx.Err() != nil {
			// The caller gave up (client went away): not the primary's fault.
			s.markIdle()
			return v, err
		}
		s.markDown(err)
	}
	s.fallbacks.Add(1)
	if s.OnFallback != nil {
		s.OnFallback()
	}
	return call(ctx, s.fallback)
}

// callPrimary runs call on the primary in its own goroutine so that a hung
// primary costs the request about Timeout, whatever the client's own
// timeouts; the goroutine ends when the client gives up. Timeout means no
// answer to anyone for that long: a call that is merely slow while the
// primary answers others (a burst queueing for Redis connections on a busy
// machine) waits, up to MaxWait, since failing it open would count it in
// process and break exactness across instances just when load is highest.
func callPrimary[T any](ctx context.Context, s *FailoverStore, call func(context.Context, Store) (T, error)) (T, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultFailoverTimeout
	}
	maxWait := s.MaxWait
	if maxWait <= 0 {
		maxWait = 8 * timeout
	}
	maxWait = max(maxWait, timeout)
	ctx, cancel := context.WithTimeout(ctx, maxWait)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1) // buffered: a late answer must not block
	go func() {
		v, err := call(ctx, s.primary)
		if err == nil {
			s.lastAnswer.Store(time.Now().UnixNano())
		}
		done <- result{v, err}
	}()
	wait := time.NewTimer(timeout)
	defer wait.Stop()
	var zero T
	for {
		select {
		case r := <-done:
			return r.v, r.err
		case <-ctx.Done():
			return zero, errPrimaryTimeout
		case <-wait.C:
			if time.Since(time.Unix(0, s.lastAnswer.Load())) >= timeout {
				return zero, errPrimaryTimeout
			}
			wait.Reset(timeout) // the primary is answering others: keep waiting
		}
	}
}

// usePrimary reports whether this call should go to the primary: always
// while it is up; while it is down, one call per ProbeInterval.
func (s *FailoverStore) usePrimary() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.down {
		return true
	}
	now := time.Now()
	if s.probing || now.Before(s.nextProbe) {
		return false
	}
	s.probing = true
	s.nextProbe = now.Add(s.probeInterval())
	return true
}

func (s *FailoverStore) markUp() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.probing = false
	if s.down {
		s.down = false
		s.logger.Info("rate-limit counters: Redis answers again, counting shared (REDIS_URL)")
	}
}

func (s *FailoverStore) markIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.probing = false
}

func (s *FailoverStore) markDown(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.probing = false
	s.nextProbe = time.Now().Add(s.probeInterval())
	if !s.down {
		s.down = true
		s.logger.Warn("rate-limit counters: Redis unreachable, counting in process until it answers; check REDIS_URL",
			slog.Any("err", err))
	}
}

func (s *FailoverStore) probeInterval() time.Duration {
	if s.ProbeInterval > 0 {
		return s.ProbeInterval
	}
	return DefaultProbeInterval
}
