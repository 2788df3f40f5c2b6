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
	DefaultProbeInterval = time.Second
	DefaultProbeTimeout  = time.Second
	DefaultDownAfter     = 3 * time.Second
	DefaultMaxWait       = 20 * time.Second
)

// Why a call to the primary ended without its answer.
var (
	errOutage  = errors.New("rate-limit counter store went down while the call waited")
	errMaxWait = errors.New("rate-limit counter store did not answer within the longest wait")
)

// degradedLogEvery spaces the warnings about calls answered in process
// while the primary is up (see failover).
const degradedLogEvery = time.Minute

// FailoverStore uses a primary Store (Redis) and, while the primary is
// unreachable, a fallback (in process): SPEC §13 wants an unreachable Redis
// to fail open to local counting, not to fail requests, and SPEC §6 wants
// the limits exact across instances whenever Redis is there, above all
// under load.
//
// So the primary counts as down only on evidence that it cannot be reached:
// a call or a probe failing with a connection error (see unreachable), or,
// for a Redis that accepts connections and never answers, a probe (a ping
// on a path of its own, Ping) that gets no answer after the primary has
// answered nothing, neither ping nor call, for DownAfter while this
// process ran on time. A slow answer is not such evidence: a burst queues
// for pooled connections, and a machine short of CPU hears answers late,
// pings included, yet Redis is there and must keep deciding. Once down, every call still waiting on the primary is answered
// by the fallback at once, later calls go to the fallback without touching
// the primary, and the first ping that answers brings it back. It logs one
// warning per outage and one notice when the primary is back.
//
// Set the exported fields before first use.
type FailoverStore struct {
	// OnFallback, when set, is called for every call the fallback answers,
	// so the app can count them in its metrics.
	OnFallback func()
	// Ping asks the primary whether it is reachable. It must not share the
	// calls' connection pool (give it a connection of its own), so that a
	// burst queueing for that pool cannot make it fail. When nil, only call
	// errors find an outage and nothing ends one.
	Ping func(context.Context) error
	// ProbeInterval is how often Run pings. Default 1s.
	ProbeInterval time.Duration
	// ProbeTimeout bounds one ping. Default 1s.
	ProbeTimeout time.Duration
	// DownAfter is how long the primary may answer nothing, while this
	// process runs on time, before a ping without an answer is an outage:
	// long enough for a busy machine, where answers come late, short
	// enough that a hung Redis holds a call at most about
	// DownAfter+ProbeInterval+ProbeTimeout. Default 3s.
	DownAfter time.Duration
	// MaxWait bounds how long one call may wait for the primary while the
	// probe finds it reachable (a long queue for pooled connections on a
	// starved machine). A call that reaches it is answered by the
	// fallback, alone: the primary is not marked down, the call is counted
	// by OnFallback and a warning is logged (at most one a minute). Past
	// that bound the request has waited far longer than a working Redis
	// takes even on a busy machine; holding it longer would only pile up
	// requests, and the limiter fails open anyway when its store fails.
	// Default 20s.
	MaxWait time.Duration

	primary, fallback Store
	logger            *slog.Logger
	fallbacks         atomic.Int64
	// lastAnswer is when the primary last answered a ping or a call
	// (Unix ns): evidence that it is there, however slow.
	lastAnswer atomic.Int64
	// lastPause is when Run last saw this process run late, and lastBeat
	// when its pause watcher last ran (Unix ns).
	lastPause, lastBeat atomic.Int64
	// degradedLogged is when the last call-answered-in-process warning
	// was logged (Unix ns).
	degradedLogged atomic.Int64

	mu   sync.Mutex
	down bool
	// outages numbers the outages, so that a probe which started before
	// the current one began cannot end it.
	outages int64
	// outage is closed when the primary goes down, releasing the calls
	// that wait on it; a fresh one replaces it when the primary is back.
	outage chan struct{}
}

// NewFailoverStore returns a Store that uses primary and falls back to
// fallback while primary is unreachable. logger receives the outage
// warnings; nil means slog.Default(). Set Ping and start Run so that an
// outage is found without a failing call, and ends.
func NewFailoverStore(primary, fallback Store, logger *slog.Logger) *FailoverStore {
	if logger == nil {
		logger = slog.Default()
	}
	s := &FailoverStore{primary: primary, fallback: fallback, logger: logger, outage: make(chan struct{})}
	s.answered() // silence counts from now
	return s
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

// failover runs call on the primary while it is up and on the fallback
// while it is down, or when the primary gave no answer (see MaxWait).
func failover[T any](ctx context.Context, s *FailoverStore, call func(context.Context, Store) (T, error)) (T, error) {
	if outage, up := s.state(); up {
		v, err := callPrimary(ctx, s, outage, call)
		switch {
		case err == nil:
			return v, nil
		case ctx.Err() != nil:
			return v, err // the caller gave up (client went away): not the primary's fault
		case errors.Is(err, errOutage):
			// The probe found the primary down while this call waited.
		case unreachable(err):
			s.markDown(err)
		default:
			s.logDegraded(err)
		}
	}
	s.fallbacks.Add(1)
	if s.OnFallback != nil {
		s.OnFallback()
	}
	return call(ctx, s.fallback)
}

// callPrimary runs call on the primary in its own goroutine and waits for
// its answer, until the probe finds the primary down (outage closes) or
// MaxWait passes, whichever comes first, whatever the client's own
// timeouts. The goroutine ends when the client gives up, which the context
// (cancelled on return) asks it to.
func callPrimary[T any](caller context.Context, s *FailoverStore, outage <-chan struct{}, call func(context.Context, Store) (T, error)) (T, error) {
	var zero T
	if err := caller.Err(); err != nil {
		// The caller already gave up: nothing to count, and no answer
		// raced against its cancellation (a select between the two would
		// pick either).
		return zero, err
	}
	maxWait := s.MaxWait
	if maxWait <= 0 {
		maxWait = DefaultMaxWait
	}
	ctx, cancel := context.WithTimeout(caller, maxWait)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1) // buffered: a late answer must not block
	go func() {
		v, err := call(ctx, s.primary)
		if err == nil {
			s.answered()
		}
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-outage:
		return zero, errOutage
	case <-ctx.Done():
		if err := caller.Err(); err != nil {
			return zero, err
		}
		return zero, errMaxWait
	}
}

// logDegraded warns that a call was answered in process although the
// primary is up, at most once per degradedLogEvery: under a burst that
// overwhelms Redis, one line says it, not thousands.
func (s *FailoverStore) logDegraded(err error) {
	now := time.Now().UnixNano()
	last := s.degradedLogged.Load()
	if now-last < int64(degradedLogEvery) || !s.degradedLogged.CompareAndSwap(last, now) {
		return
	}
	s.logger.Warn("rate-limit counters: a Redis call failed while Redis is reachable; counted in process, this decision is not shared with other instances",
		slog.Any("err", err))
}
