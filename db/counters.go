package db

import (
	"context"
	"fmt"
	"time"

	"petstore/db/internal/counters"
)

// The change counters a request reads: auth_changes (auth_changes.go) and
// catalog_changes (migration 00003), read together in one statement, at
// most once per request, and on PostgreSQL shared among the requests of
// one moment (db/internal/counters).

const (
	countersQuery = `SELECT (SELECT version FROM auth_changes WHERE id = 1) AS auth,
	(SELECT COALESCE(SUM(version), 0) FROM catalog_changes) AS catalog`
	authCounterQuery = `SELECT version AS auth FROM auth_changes WHERE id = 1`
)

// WithAuthSnapshot returns a context for one request in which the change
// counters are read at most once: the key lookup, the rate limiter's ban
// check and, with catalog, a conditional GET share that read, so
// authenticating an API request costs one small query. Without catalog the
// read skips the catalog's counter, which only the catalog's GETs use (a
// write has no use for its slots). Only a request's own context should
// carry it: a long-lived task (an event stream re-checking its key) must
// read the counters afresh.
func WithAuthSnapshot(ctx context.Context, catalog bool) context.Context {
	return counters.With(ctx, catalog)
}

// failCounters records in the request's snapshot that err, an outage,
// kept it from reading the counters: it will not wait for the database a
// second time. Other errors are not remembered.
func failCounters(ctx context.Context, err error) {
	if IsUnavailable(err) {
		counters.Of(ctx).Fail(err)
	}
}

// AuthVersion returns the change counter of keys and bans: the value this
// request already read (WithAuthSnapshot), else a fresh read.
func (s *Store) AuthVersion(ctx context.Context) (int64, error) {
	c, ok, _, err := counters.Of(ctx).Get()
	if ok || err != nil {
		return c.Auth, err
	}
	if c, err = s.readCountersFor(ctx, counters.Of(ctx).WantsCatalog()); err != nil {
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
	c, _, ok, err := counters.Of(ctx).Get()
	if ok || err != nil {
		return c.Catalog, err
	}
	if c, err = s.readCountersFor(ctx, true); err != nil {
		return 0, fmt.Errorf("catalog version: %w", err)
	}
	return c.Catalog, nil
}

// counterReadSpacing is the least time between two shared reads of the
// counters (counters.SharedReads.Spacing): under load a request waits up
// to half a millisecond more, and one read serves every request of that
// time instead of the few that arrived during the read before (issue 44:
// back-to-back reads took a third of a remembered page's CPU on SQLite, a
// sixth on PostgreSQL, and as much again of PostgreSQL's).
const counterReadSpacing = 500 * time.Microsecond

// readCountersFor reads the auth counter, and with catalog the catalog's,
// afresh for the request of ctx and records them in its snapshot.
// Concurrent requests share reads (counters.SharedReads): on PostgreSQL
// each read is a round trip, and on SQLite, though it reads a local page,
// a read is a transaction of its own whose file locks (fcntl) and
// statement took a third of a remembered catalog page's CPU (issue 44).
func (s *Store) readCountersFor(ctx context.Context, catalog bool) (counters.Values, error) {
	shared := &s.authReads
	if catalog {
		shared = &s.counterReads
	}
	c, err := shared.Join(ctx)
	if err != nil {
		failCounters(ctx, err)
		return counters.Values{}, err
	}
	counters.Of(ctx).RememberAll(c, catalog)
	return c, nil
}

// readCountersWith is a read of the counters by query (countersQuery or
// authCounterQuery).
func (s *Store) readCountersWith(query string) func(context.Context) (counters.Values, error) {
	return func(ctx context.Context) (counters.Values, error) {
		var c counters.Values
		err := s.get(ctx, &c, query)
		return c, err
	}
}
