package db

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The change counters a request reads: auth_changes (auth_changes.go) and
// catalog_changes (migration 00003), read together in one statement, at
// most once per request, and on PostgreSQL shared among the requests of
// one moment.

type authSnapshotKey struct{}

// counters are the change counters one read returns together: auth_changes
// (keys and bans) and catalog_changes (what the catalog and inventory GETs
// show, CatalogVersion). An API request needs the first to authenticate and,
// on a conditional GET, the second; reading both in one statement costs
// the request one query (or, shared, a fraction of one) instead of two.
type counters struct {
	Auth    int64 `db:"auth"`
	Catalog int64 `db:"catalog"`
}

const (
	countersQuery = `SELECT (SELECT version FROM auth_changes WHERE id = 1) AS auth,
	(SELECT COALESCE(SUM(version), 0) FROM catalog_changes) AS catalog`
	authCounterQuery = `SELECT version AS auth FROM auth_changes WHERE id = 1`
)

// authSnapshot is the counters as one request first read them, or the
// outage that kept it from reading them: a request that found the database
// unreachable does not wait for it a second time (a hung server costs the
// connect timeout once per request, not once per query).
type authSnapshot struct {
	catalog bool // the request reads the catalog's counter too

	mu        sync.Mutex
	c         counters
	authOK    bool
	catalogOK bool
	err       error
}

// WithAuthSnapshot returns a context for one request in which the change
// counters are read at most once: the key lookup, the rate limiter's ban
// check and, with catalog, a conditional GET share that read, so
// authenticating an API request costs one small query. Without catalog the
// read skips the catalog's counter, which only the catalog's GETs use (a
// write has no use for its slots). Only a request's own context should
// carry it: a long-lived task (an event stream re-checking its key) must
// read the counters afresh.
func WithAuthSnapshot(ctx context.Context, catalog bool) context.Context {
	return context.WithValue(ctx, authSnapshotKey{}, &authSnapshot{catalog: catalog})
}

func snapshotOf(ctx context.Context) *authSnapshot {
	snap, _ := ctx.Value(authSnapshotKey{}).(*authSnapshot)
	return snap
}

// remember records v as the request's auth counter unless one was read
// before.
func (snap *authSnapshot) remember(v int64) {
	if snap == nil {
		return
	}
	snap.mu.Lock()
	defer snap.mu.Unlock()
	if !snap.authOK {
		snap.c.Auth, snap.authOK = v, true
	}
}

// rememberAll records the counters c (the catalog's only when withCatalog
// says it was read), each unless it was read before.
func (snap *authSnapshot) rememberAll(c counters, withCatalog bool) {
	if snap == nil {
		return
	}
	snap.mu.Lock()
	defer snap.mu.Unlock()
	if !snap.authOK {
		snap.c.Auth, snap.authOK = c.Auth, true
	}
	if withCatalog && !snap.catalogOK {
		snap.c.Catalog, snap.catalogOK = c.Catalog, true
	}
}

// wantsCatalog reports whether the request reads the catalog's counter.
func (snap *authSnapshot) wantsCatalog() bool { return snap != nil && snap.catalog }

// fail records err when it says the database is unavailable.
func (snap *authSnapshot) fail(err error) {
	if snap == nil || !IsUnavailable(err) {
		return
	}
	snap.mu.Lock()
	defer snap.mu.Unlock()
	if !(snap.authOK && snap.catalogOK) && snap.err == nil {
		snap.err = err
	}
}

// get returns the request's counters, which of them it has read, and the
// outage that kept it from reading them.
func (snap *authSnapshot) get() (c counters, authOK, catalogOK bool, err error) {
	if snap == nil {
		return counters{}, false, false, nil
	}
	snap.mu.Lock()
	defer snap.mu.Unlock()
	return snap.c, snap.authOK, snap.catalogOK, snap.err
}

// AuthVersion returns the change counter of keys and bans: the value this
// request already read (WithAuthSnapshot), else a fresh read.
func (s *Store) AuthVersion(ctx context.Context) (int64, error) {
	c, ok, _, err := snapshotOf(ctx).get()
	if ok || err != nil {
		return c.Auth, err
	}
	if c, err = s.readCountersFor(ctx, snapshotOf(ctx).wantsCatalog()); err != nil {
		return 0, fmt.Errorf("auth version: %w", err)
	}
	return c.Auth, nil
}

// CatalogVersion returns the change counter of the catalog and inventory
// (migration 00003): it grows with every committed change to pets,
// categories or stock, whatever wrote it, so two reads that return the same
// value saw the same catalog. Conditional GETs (SPEC §2) use it to answer
// from what they served before without running their query. It is the
// value this request already read (WithAuthSnapshot: an API request reads
// it with its key's counter), else a fresh read; either was read after the
// request began.
func (s *Store) CatalogVersion(ctx context.Context) (int64, error) {
	c, _, ok, err := snapshotOf(ctx).get()
	if ok || err != nil {
		return c.Catalog, err
	}
	if c, err = s.readCountersFor(ctx, true); err != nil {
		return 0, fmt.Errorf("catalog version: %w", err)
	}
	return c.Catalog, nil
}

// readCountersFor reads the auth counter, and with catalog the catalog's,
// afresh for the request of ctx and records them in its snapshot. On
// PostgreSQL, where each read is a round trip, concurrent requests share
// reads (sharedReads); SQLite reads a local page.
func (s *Store) readCountersFor(ctx context.Context, catalog bool) (counters, error) {
	shared := &s.authReads
	if catalog {
		shared = &s.counterReads
	}
	read := shared.read
	if s.dialect == DialectPostgres {
		read = shared.join
	}
	c, err := read(ctx)
	if err != nil {
		snapshotOf(ctx).fail(err)
		return counters{}, err
	}
	snapshotOf(ctx).rememberAll(c, catalog)
	return c, nil
}

// readCountersWith is a read of the counters by query (countersQuery or
// authCounterQuery).
func (s *Store) readCountersWith(query string) func(context.Context) (counters, error) {
	return func(ctx context.Context) (counters, error) {
		var c counters
		err := s.get(ctx, &c, query)
		return c, err
	}
}

// sharedReads shares fresh reads of a value among the requests that need
// one at the same moment (the counters on PostgreSQL, where each read is a
// round trip). A read serves only the requests that were already waiting
// when it started, so every request still gets a value read after it
// asked, as the rule above requires; requests that arrive while a read is
// under way wait for the next one, which starts as soon as that read ends.
// Under load a round trip so serves every request that arrived during the
// one before, instead of one each.
type sharedReads[T any] struct {
	read func(context.Context) (T, error)

	mu      sync.Mutex
	running bool           // a reader goroutine is at work
	next    *sharedRead[T] // the read that arrivals join; it starts when the running one ends
}

// sharedRead is one shared read and its result.
type sharedRead[T any] struct {
	done chan struct{}
	v    T
	err  error
}

// sharedReadTimeout bounds one shared read. It runs on no request's
// context, since several requests wait for it; each still stops waiting
// when its own context ends.
const sharedReadTimeout = 10 * time.Second

// join waits for a read that starts after this call.
func (r *sharedReads[T]) join(ctx context.Context) (T, error) {
	r.mu.Lock()
	if r.next == nil {
		r.next = &sharedRead[T]{done: make(chan struct{})}
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
		var zero T
		return zero, ctx.Err()
	}
}

// run performs the queued reads one after another until none is waiting.
func (r *sharedReads[T]) run() {
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
		ctx, cancel := context.WithTimeout(context.Background(), sharedReadTimeout)
		rd.v, rd.err = r.read(ctx)
		cancel()
		close(rd.done)
	}
}
