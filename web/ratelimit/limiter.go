package ratelimit

import (
	"context"
	"fmt"
	"time"
)

// Defaults of Config, from SPEC §6.
const (
	DefaultStrikes     = 20
	DefaultBanBase     = 15 * time.Minute
	DefaultBanCacheTTL = time.Second
)

const (
	// maxBan caps the doubling of ban durations.
	maxBan = 24 * time.Hour
	// banLookback is how far back earlier bans double the next one.
	banLookback = 24 * time.Hour
)

// Config configures a Limiter. Zero fields take their defaults.
type Config struct {
	// Store keeps the counters; default NewMemoryStore().
	Store Store
	// Bans keeps the bans; default NewMemoryBanStore(), which is neither
	// durable nor shared: production passes the database's implementation.
	Bans BanStore
	// Strikes is the number of requests after a first 429 in a window that
	// starts a ban (PETSTORE_BAN_STRIKES); default 20.
	Strikes int
	// BanBase is the first ban's length (PETSTORE_BAN_DURATION); each
	// earlier ban in the last 24 hours doubles it, up to 24 hours. Default 15m.
	BanBase time.Duration
	// BanCacheTTL is how long this process trusts what the BanStore said
	// about a subject: a ban set by another instance applies here within
	// it. Default 1s.
	BanCacheTTL time.Duration
	// Now is the clock; default time.Now. Tests pin it.
	Now func() time.Time
}

// Limiter makes the rate-limit decisions of SPEC §6 for any number of
// subjects. It is safe for concurrent use.
type Limiter struct {
	store   Store
	bans    BanStore
	strikes int
	banBase time.Duration
	now     func() time.Time
	cache   *banCache
}

// New returns a Limiter configured by cfg.
func New(cfg Config) *Limiter {
	l := &Limiter{
		store:   cfg.Store,
		bans:    cfg.Bans,
		strikes: cfg.Strikes,
		banBase: cfg.BanBase,
		now:     cfg.Now,
	}
	if l.store == nil {
		l.store = NewMemoryStore()
	}
	if l.bans == nil {
		l.bans = NewMemoryBanStore()
	}
	if l.strikes <= 0 {
		l.strikes = DefaultStrikes
	}
	if l.banBase <= 0 {
		l.banBase = DefaultBanBase
	}
	if l.now == nil {
		l.now = time.Now
	}
	ttl := cfg.BanCacheTTL
	if ttl <= 0 {
		ttl = DefaultBanCacheTTL
	}
	l.cache = newBanCache(ttl)
	return l
}

// Allow decides one request of subject under lim and, when it is allowed,
// uses one unit of both windows. A rejected request uses none, but counts
// toward strikes; the request that makes the configured number of strikes
// starts a ban. Errors come from the counter or ban store; when they occur
// the Decision is zero and must not be used.
func (l *Limiter) Allow(ctx context.Context, subject string, lim Limits) (Decision, error) {
	if err := lim.Validate(); err != nil {
		return Decision{}, err
	}
	now := l.now().UTC()
	until, banned, err := l.activeBan(ctx, subject, now)
	if err != nil {
		return Decision{}, err
	}
	if banned {
		return l.peekDecision(ctx, subject, lim, now, until)
	}
	r, err := l.store.Take(ctx, subject, lim, l.strikes, now)
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit: %w", err)
	}
	d := decide(now, lim, r.Counts, !r.Allowed)
	if r.StartBan {
		until, created, err := l.startBan(ctx, subject, now)
		if err != nil {
			return Decision{}, err
		}
		d = d.withBan(now, until)
		d.BanStarted = created
	}
	return d, nil
}

// AllowUnbanned decides one request of subject under lim like Allow, for
// a bucket that has no bans (the storefront's per-IP limit, SPEC §9): it
// neither consults nor starts a ban, so it never reads the BanStore (the
// database), and a rejected request only counts as a 429.
func (l *Limiter) AllowUnbanned(ctx context.Context, subject string, lim Limits) (Decision, error) {
	if err := lim.Validate(); err != nil {
		return Decision{}, err
	}
	now := l.now().UTC()
	r, err := l.store.Take(ctx, subject, lim, 0, now) // 0 strikes: never a ban
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit: %w", err)
	}
	return decide(now, lim, r.Counts, !r.Allowed), nil
}

// Status reports subject's state under lim without using anything: what
// GET /rate-limit shows. Allowed says whether a request now would pass.
func (l *Limiter) Status(ctx context.Context, subject string, lim Limits) (Decision, error) {
	if err := lim.Validate(); err != nil {
		return Decision{}, err
	}
	now := l.now().UTC()
	until, banned, err := l.activeBan(ctx, subject, now)
	if err != nil {
		return Decision{}, err
	}
	if !banned {
		until = time.Time{}
	}
	return l.peekDecision(ctx, subject, lim, now, until)
}

// peekDecision builds a Decision from the current counts, banned until
// until when that is not zero.
func (l *Limiter) peekDecision(ctx context.Context, subject string, lim Limits, now, until time.Time) (Decision, error) {
	c, err := l.store.Peek(ctx, subject, now)
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit: %w", err)
	}
	d := decide(now, lim, c, c.Minute >= lim.PerMinute || c.Day >= lim.PerDay)
	if !until.IsZero() {
		d = d.withBan(now, until)
	}
	return d, nil
}

// LiftBan ends subject's ban now and clears the strikes of the current
// windows, so the caller starts afresh. A lifted ban does not lengthen
// later ones.
func (l *Limiter) LiftBan(ctx context.Context, subject string) error {
	now := l.now().UTC()
	if err := l.bans.LiftBan(ctx, subject, now); err != nil {
		return fmt.Errorf("ratelimit: lift ban: %w", err)
	}
	l.cache.set(subject, time.Time{}, now)
	if err := l.store.ClearStrikes(ctx, subject, now); err != nil {
		return fmt.Errorf("ratelimit: %w", err)
	}
	return nil
}

// activeBan answers from the cache while it is fresh, else from the
// BanStore, refreshing the cache.
func (l *Limiter) activeBan(ctx context.Context, subject string, now time.Time) (time.Time, bool, error) {
	until, fresh := l.cache.get(subject, now)
	if !fresh {
		var ok bool
		var err error
		until, ok, err = l.bans.ActiveBan(ctx, subject, now)
		if err != nil {
			return time.Time{}, false, fmt.Errorf("ratelimit: active ban: %w", err)
		}
		if !ok {
			until = time.Time{}
		}
		l.cache.set(subject, until, now)
	}
	return until, until.After(now), nil
}

// startBan bans subject from now and returns the ban's end, and whether
// this call created the ban. The length doubles for each ban in the last
// 24 hours that was not lifted.
func (l *Limiter) startBan(ctx context.Context, subject string, now time.Time) (until time.Time, created bool, err error) {
	// Another instance may have banned the subject a moment ago, before our
	// cache could know: join that ban instead of stacking a second one,
	// which would also double the next.
	until, ok, err := l.bans.ActiveBan(ctx, subject, now)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("ratelimit: active ban: %w", err)
	}
	if !ok {
		n, err := l.bans.CountBans(ctx, subject, now.Add(-banLookback))
		if err != nil {
			return time.Time{}, false, fmt.Errorf("ratelimit: count bans: %w", err)
		}
		until = ceilSecond(now.Add(banDuration(l.banBase, n)))
		if err := l.bans.CreateBan(ctx, subject, now, until); err != nil {
			return time.Time{}, false, fmt.Errorf("ratelimit: create ban: %w", err)
		}
	}
	l.cache.set(subject, until, now)
	return until, !ok, nil
}

// banDuration is base doubled once per earlier ban, capped at 24 hours.
func banDuration(base time.Duration, earlier int) time.Duration {
	d := base
	for range earlier {
		if d >= maxBan/2 {
			return maxBan
		}
		d *= 2
	}
	return min(d, maxBan)
}

// ceilSecond rounds t up to a whole second, so that a ban's end, its
// Retry-After and its bannedUntil all agree.
func ceilSecond(t time.Time) time.Time {
	if r := t.Truncate(time.Second); r.Before(t) {
		return r.Add(time.Second)
	}
	return t
}
