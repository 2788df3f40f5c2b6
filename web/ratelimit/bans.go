package ratelimit

import (
	"context"
	"sync"
	"time"
)

// BanStore keeps bans durably: the database layer implements it so that a
// ban survives a restart and applies on every instance. MemoryBanStore is
// the in-process implementation for tests and single-process use.
type BanStore interface {
	// ActiveBan reports the end of the subject's ban in force at now: one
	// that started at or before now, ends after now and was not lifted.
	// When several overlap it returns the latest end.
	ActiveBan(ctx context.Context, subject string, now time.Time) (until time.Time, ok bool, err error)
	// CreateBan records a ban from start until until.
	CreateBan(ctx context.Context, subject string, start, until time.Time) error
	// CountBans counts the subject's bans that started after since and were
	// not lifted, expired ones included: they make the next ban longer.
	CountBans(ctx context.Context, subject string, since time.Time) (int, error)
	// LiftBan marks the subject's bans in force at now as lifted. Lifting
	// when there is no ban is not an error.
	LiftBan(ctx context.Context, subject string, now time.Time) error
}

// MemoryBanStore is a BanStore in process memory: bans last as long as the
// process and apply to it alone.
type MemoryBanStore struct {
	mu   sync.Mutex
	bans map[string][]memoryBan
}

type memoryBan struct {
	start, until time.Time
	lifted       bool
}

// NewMemoryBanStore returns an empty MemoryBanStore.
func NewMemoryBanStore() *MemoryBanStore {
	return &MemoryBanStore{bans: make(map[string][]memoryBan)}
}

// active reports whether b is in force at now.
func (b memoryBan) active(now time.Time) bool {
	return !b.lifted && !b.start.After(now) && b.until.After(now)
}

// ActiveBan implements BanStore.
func (s *MemoryBanStore) ActiveBan(_ context.Context, subject string, now time.Time) (time.Time, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var until time.Time
	for _, b := range s.bans[subject] {
		if b.active(now) && b.until.After(until) {
			until = b.until
		}
	}
	return until, !until.IsZero(), nil
}

// CreateBan implements BanStore. It also forgets the subject's bans that can
// no longer matter: over, and started more than a day before this one.
func (s *MemoryBanStore) CreateBan(_ context.Context, subject string, start, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.bans[subject]
	kept := old[:0]
	for _, b := range old {
		if b.until.After(start) || b.start.After(start.Add(-banLookback)) {
			kept = append(kept, b)
		}
	}
	s.bans[subject] = append(kept, memoryBan{start: start, until: until})
	return nil
}

// CountBans implements BanStore.
func (s *MemoryBanStore) CountBans(_ context.Context, subject string, since time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, b := range s.bans[subject] {
		if !b.lifted && b.start.After(since) {
			n++
		}
	}
	return n, nil
}

// LiftBan implements BanStore.
func (s *MemoryBanStore) LiftBan(_ context.Context, subject string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	bans := s.bans[subject]
	for i := range bans {
		if bans[i].active(now) {
			bans[i].lifted = true
		}
	}
	return nil
}

// banCache remembers, per subject, what the BanStore said a moment ago, so
// that a request costs a database query at most once per ttl per subject.
// A ban created or lifted elsewhere is therefore seen within ttl; one
// created or lifted here is written to the cache at once.
type banCache struct {
	ttl   time.Duration
	mu    sync.Mutex
	m     map[string]cachedBan
	swept time.Time
}

type cachedBan struct {
	until   time.Time // zero: not banned
	checked time.Time
}

func newBanCache(ttl time.Duration) *banCache {
	return &banCache{ttl: ttl, m: make(map[string]cachedBan)}
}

// get returns the cached ban end for subject and whether the entry is still
// fresh at now. A clock that went backwards makes the entry stale.
func (c *banCache) get(subject string, now time.Time) (until time.Time, fresh bool) {
	c.mu.Lock()
	e, ok := c.m[subject]
	c.mu.Unlock()
	age := now.Sub(e.checked)
	return e.until, ok && age >= 0 && age < c.ttl
}

// set records what is known about subject at now (zero until: no ban), and
// once a minute drops the stale entries so the map does not keep every
// subject ever seen.
func (c *banCache) set(subject string, until, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[subject] = cachedBan{until: until, checked: now}
	if now.Sub(c.swept) < time.Minute {
		return
	}
	c.swept = now
	for s, e := range c.m {
		if now.Sub(e.checked) >= c.ttl {
			delete(c.m, s)
		}
	}
}
