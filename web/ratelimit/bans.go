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
	// BanVersion is a number that changes, for every reader, as soon as
	// any ban was created or lifted (by any instance, when the store is
	// shared). The limiter trusts what it cached only while it is
	// unchanged, so it must be read in every request: cheaply.
	BanVersion(ctx context.Context) (int64, error)
}

// MemoryBanStore is a BanStore in process memory: bans last as long as the
// process and apply to it alone.
type MemoryBanStore struct {
	mu      sync.Mutex
	bans    map[string][]memoryBan
	version int64
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
	s.version++
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
	s.version++
	return nil
}

// BanVersion implements BanStore.
func (s *MemoryBanStore) BanVersion(context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version, nil
}

// banCache remembers, per subject, what the BanStore said at one value of
// its BanVersion, so that a request costs a ban query only when some ban
// changed since. An entry is used only while the version read during the
// current request is the one it was read at: a ban created or lifted by
// any instance applies to the very next request everywhere.
type banCache struct {
	mu      sync.Mutex
	version int64
	m       map[string]time.Time // zero: not banned
}

// maxCachedBans bounds the cache: past it, it starts afresh.
const maxCachedBans = 100_000

func newBanCache() *banCache {
	return &banCache{m: make(map[string]time.Time)}
}

// get returns the cached ban end for subject (zero: not banned) and
// whether there is an entry valid at version.
func (c *banCache) get(subject string, version int64) (until time.Time, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	until, ok = c.m[subject]
	return until, ok && version == c.version
}

// set records what the BanStore said about subject after version was read
// (zero until: no ban). A newer version drops every older entry.
func (c *banCache) set(subject string, until time.Time, version int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case version < c.version:
		return
	case version > c.version || len(c.m) >= maxCachedBans:
		c.m = make(map[string]time.Time)
		c.version = version
	}
	c.m[subject] = until
}

// last is the newest ban end this process knows for subject, whatever
// version it was read at (zero: none): the answer while the BanStore is
// unreachable.
func (c *banCache) last(subject string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[subject]
}

// hold records a ban this process started but could not store: it stands
// at the current version, so it holds here until a change to the durable
// bans is seen.
func (c *banCache) hold(subject string, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[subject] = until
}

// forget drops subject's entry after this process changed its ban: the
// version has moved on anyway, but a request still holding the old one
// must not see the old answer.
func (c *banCache) forget(subject string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, subject)
}
