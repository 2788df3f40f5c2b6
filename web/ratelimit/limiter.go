package ratelimit

import (
	"context"
	"fmt"
	"time"
)

// Defaults of Config, from SPEC §6.
const (
	DefaultStrikes = 20
	DefaultBanBase = 15 * time.Minute
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
	l.cache = newBanCache()
	return l
}

// Allow decides one request of subject under lim and, when it is allowed,
// uses one unit of both windows. A rejected request uses none, but counts
// toward strikes; the request that makes the configured number of strikes
// starts a ban. Errors come from the counter store; when they occur the
// Decision is zero and must not be used. A failing BanStore is no error:
// see Decision.BanErr.
func (l *Limiter) Allow(ctx context.Context, subject string, lim Limits) (Decision, error) {
	if err := lim.Validate(); err != nil {
		return Decision{}, err
	}
	now := l.now().UTC()
	until, banned, banErr := l.activeBan(ctx, subject, now)
	if banned {
		d, err := l.peekDecision(ctx, subject, lim, now, until)
		d.BanErr = banErr
		return d, err
	}
	r, err := l.store.Take(ctx, subject, lim, l.strikes, now)
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit: %w", err)
	}
	d := decide(now, lim, r.Counts, !r.Allowed)
	if r.StartBan {
		until, created, err := l.startBan(ctx, subject, now)
		if err != nil {
			// The ban cannot be recorded: hold it here, where the cache
			// keeps it while the BanStore stays unreachable, rather than
			// let the strikes that earned it go unanswered.
			until, created = ceilSecond(now.Add(l.banBase)), true
			l.cache.hold(subject, until)
			banErr = err
		}
		d = d.withBan(now, until)
		d.BanStarted = created
	}
	d.BanErr = banErr
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
	until, banned, banErr := l.activeBan(ctx, subject, now)
	if !banned {
		until = time.Time{}
	}
	d, err := l.peekDecision(ctx, subject, lim, now, until)
	d.BanErr = banErr
	return d, err
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
	l.cache.forget(subject)
	if err := l.store.ClearStrikes(ctx, subject, now); err != nil {
		return fmt.Errorf("ratelimit: %w", err)
	}
	return nil
}

// activeBan answers from the cache while the BanStore's version is the
// one the entry was read at, else from the BanStore, refreshing the cache.
// The version is read first: an entry never claims a newer version than
// the answer it holds. When the BanStore fails it answers from what this
// process last knew (no ban when it knows nothing) and returns the failure
// beside the answer.
func (l *Limiter) activeBan(ctx context.Context, subject string, now time.Time) (time.Time, bool, error) {
	version, err := l.bans.BanVersion(ctx)
	if err != nil {
		last := l.cache.last(subject)
		return last, last.After(now), fmt.Errorf("ratelimit: ban version: %w", err)
	}
	until, ok := l.cache.get(subject, version)
	if !ok {
		last := until
		var banned bool
		until, banned, err = l.bans.ActiveBan(ctx, subject, now)
		if err != nil {
			return last, last.After(now), fmt.Errorf("ratelimit: active ban: %w", err)
		}
		if !banned {
			until = time.Time{}
		}
		l.cache.set(subject, until, version)
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
	l.cache.forget(subject)
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
