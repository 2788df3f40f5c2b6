package db

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The change counter of authentication (SPEC §3, §6): one row in
// auth_changes, bumped in the same transaction as every change to a key or
// a ban. Caches of keys (keyCache) and bans (the rate limiter's) tag each
// entry with the counter they read it at, and use it only while a read of
// the counter made during the current request still returns that value.
//
// Why that is exact: a change commits together with its bump, so a request
// that starts after the commit reads a counter at least as new, finds no
// entry with that tag that predates the change, and asks the database. The
// entries are filled with data read no earlier than their tag (in the same
// statement, or after reading the counter), so an entry never claims a
// newer counter than its data. This holds across instances and processes
// (the CLI) alike, because the counter lives in the database, not in memory.

const authVersionQuery = `SELECT version FROM auth_changes WHERE id = 1`

// bumpAuthVersion marks the transaction as a change to authentication or
// bans. The row lock it takes on PostgreSQL orders such transactions, so
// the counter's values commit in increasing order.
func (tx *Tx) bumpAuthVersion(ctx context.Context) error {
	if _, err := tx.exec(ctx, `UPDATE auth_changes SET version = version + 1 WHERE id = 1`); err != nil {
		return fmt.Errorf("bump auth version: %w", err)
	}
	return nil
}

type authSnapshotKey struct{}

// authSnapshot is the counter as one request first read it, or the
// outage that kept it from reading it: a request that found the database
// unreachable does not wait for it a second time (a hung server costs the
// connect timeout once per request, not once per query).
type authSnapshot struct {
	mu      sync.Mutex
	version int64
	ok      bool
	err     error
}

// WithAuthSnapshot returns a context for one request in which the change
// counter is read at most once: the key lookup and the rate limiter's ban
// check share that read, so authenticating an API request costs one small
// query. Only a request's own context should carry it: a long-lived task
// (an event stream re-checking its key) must read the counter afresh.
func WithAuthSnapshot(ctx context.Context) context.Context {
	return context.WithValue(ctx, authSnapshotKey{}, &authSnapshot{})
}

func snapshotOf(ctx context.Context) *authSnapshot {
	snap, _ := ctx.Value(authSnapshotKey{}).(*authSnapshot)
	return snap
}

// remember records v as the request's counter unless one was read before.
func (snap *authSnapshot) remember(v int64) {
	if snap == nil {
		return
	}
	snap.mu.Lock()
	defer snap.mu.Unlock()
	if !snap.ok {
		snap.version, snap.ok = v, true
	}
}

// fail records err when it says the database is unavailable.
func (snap *authSnapshot) fail(err error) {
	if snap == nil || !IsUnavailable(err) {
		return
	}
	snap.mu.Lock()
	defer snap.mu.Unlock()
	if !snap.ok && snap.err == nil {
		snap.err = err
	}
}

func (snap *authSnapshot) get() (int64, bool, error) {
	if snap == nil {
		return 0, false, nil
	}
	snap.mu.Lock()
	defer snap.mu.Unlock()
	return snap.version, snap.ok, snap.err
}

// AuthVersion returns the change counter of keys and bans: the value this
// request already read (WithAuthSnapshot), else a fresh read.
func (s *Store) AuthVersion(ctx context.Context) (int64, error) {
	snap := snapshotOf(ctx)
	if v, ok, err := snap.get(); ok || err != nil {
		return v, err
	}
	read := s.readAuthVersion
	if s.dialect == DialectPostgres {
		read = s.versionReads.join
	}
	v, err := read(ctx)
	if err != nil {
		err = fmt.Errorf("auth version: %w", err)
		snap.fail(err)
		return 0, err
	}
	snap.remember(v)
	return v, nil
}

// readAuthVersion reads the counter with one query.
func (s *Store) readAuthVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.get(ctx, &v, authVersionQuery)
	return v, err
}

// versionReads shares fresh reads of the counter among the requests that
// need one at the same moment (PostgreSQL, where each read is a round
// trip; SQLite reads a local page). A read serves only the requests that
// were already waiting when it started, so every request still gets a value
// read after it asked, as the rule above requires; requests that arrive
// while a read is under way wait for the next one, which starts as soon as
// that read ends. Under load a round trip so serves every request that
// arrived during the one before, instead of one each.
type versionReads struct {
	read func(context.Context) (int64, error)

	mu      sync.Mutex
	running bool         // a reader goroutine is at work
	next    *versionRead // the read that arrivals join; it starts when the running one ends
}

// versionRead is one shared read and its result.
type versionRead struct {
	done chan struct{}
	v    int64
	err  error
}

// versionReadTimeout bounds one shared read. It runs on no request's
// context, since several requests wait for it; each still stops waiting
// when its own context ends.
const versionReadTimeout = 10 * time.Second

// join waits for a read of the counter that starts after this call.
func (r *versionReads) join(ctx context.Context) (int64, error) {
	r.mu.Lock()
	if r.next == nil {
		r.next = &versionRead{done: make(chan struct{})}
	}
	mine := r.next
	if !r.running {
		r.running = true
		go r.run()
	}
	r.mu.Unlock()
	select {
	case <-mine.done:
		return mine.v, mine.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// run performs the queued reads one after another until none is waiting.
func (r *versionReads) run() {
	for {
		r.mu.Lock()
		rd := r.next
		r.next = nil
		if rd == nil {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), versionReadTimeout)
		rd.v, rd.err = r.read(ctx)
		cancel()
		close(rd.done)
	}
}

// BanVersion is AuthVersion for the rate limiter (ratelimit.BanStore): every
// ban created or lifted changes it.
func (s *Store) BanVersion(ctx context.Context) (int64, error) { return s.AuthVersion(ctx) }
