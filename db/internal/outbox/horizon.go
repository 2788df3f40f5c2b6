// Package outbox is the engine under the store's events table on
// PostgreSQL: the horizon up to which readers may deliver events without
// ever skipping one that commits late, and the NOTIFY that wakes other
// instances after commits. The events themselves, and what they say, are
// the store's.
package outbox

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/lib/pq"
)

// On PostgreSQL, writers commit concurrently, so event ids do not commit in
// id order: the transaction holding id 7 may commit after the one holding
// id 8. A reader that delivered 8 and moved its cursor past it would never
// see 7. So readers only deliver events up to a horizon below which no
// event can still appear.
//
// Why the horizon below is safe. Let one statement read M, the newest id
// visible in its snapshot S, and then W, the transactions that have a
// transaction id and hold a lock (other than ACCESS SHARE) on the events
// table. Event ids come only from the identity default of an INSERT INTO
// events, a sequence with CACHE 1, so values are handed out in increasing
// order across sessions. Take any id m < M that is not visible in S, held
// by a transaction T:
//   - m was handed out before M, and M's transaction committed before S,
//     so T drew m before S. Before that, T had a transaction id (the
//     invariant below) and its INSERT had locked the events table (ROW
//     EXCLUSIVE, taken before the executor evaluates the default); a
//     transaction keeps both locks until it ends.
//   - If T still holds them when W is read, T is in W.
//   - Otherwise T has ended, and PostgreSQL ends a transaction in the
//     proc array (what snapshots see) before it releases its locks: any
//     snapshot taken after W was read sees T's commit, or T aborted.
//
// Hence with W empty, every event with id <= M is either visible to the
// next statement or will never exist: M is safe. With W not empty, M
// becomes safe once every transaction of W is gone from a later W (the
// same argument, read later). Under steady load the horizon so lags one
// read behind; a long-running transaction that writes events (or purges
// them) holds delivery back until it ends, but never loses an event.
//
// Only writers of this events table count: transactions of other tables,
// schemas or databases on the same server do not hold the horizon back,
// nor do sessions that merely prepare a statement on the table (a lock
// without a transaction id).
//
// The invariants this needs: nothing draws an event id except the INSERT
// INTO events itself (no nextval on its sequence elsewhere, and the
// sequence keeps CACHE 1), and that INSERT makes sure its transaction has
// an id before it draws one (pg_current_xact_id() in a one-time filter):
// nextval alone assigns none, and the events are sometimes the first rows
// a transaction writes.
// horizonQuery reads M and W in one statement, so W is read after M's
// snapshot was taken; pg_locks is read once, so both locks of a writer
// come from one scan.
const horizonQuery = `WITH l AS MATERIALIZED (
		SELECT locktype, database, relation, mode, virtualtransaction FROM pg_locks)
	SELECT (SELECT COALESCE(MAX(id), 0) FROM events) AS newest,
	ARRAY(SELECT DISTINCT r.virtualtransaction FROM l r JOIN l x
			ON x.virtualtransaction = r.virtualtransaction AND x.locktype = 'transactionid'
		WHERE r.locktype = 'relation' AND r.relation = 'events'::regclass
		AND r.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND r.mode <> 'AccessShareLock') AS writers`

// Getter runs a query for one row (the store's statement cache).
type Getter func(ctx context.Context, dest any, query string, args ...any) error

// Horizon is a store's knowledge of the horizon. Its zero value is ready.
type Horizon struct {
	// mu is held across the horizon query: a result may only be judged
	// against a candidate read before it, so reads take turns.
	mu   sync.Mutex
	safe int64 // every event with id <= safe is final
	// cand, when set, is a newer id waiting for its writers to end.
	cand *candidate
}

type candidate struct {
	newest  int64
	writers []string // virtual transaction ids
}

// Read returns the newest id up to which the outbox is final: every event
// with a smaller or equal id that will ever exist is visible to statements
// that start after this call returns. get runs horizonQuery.
func (h *Horizon) Read(ctx context.Context, get Getter) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var r struct {
		Newest  int64          `db:"newest"`
		Writers pq.StringArray `db:"writers"`
	}
	if err := get(ctx, &r, horizonQuery); err != nil {
		return 0, fmt.Errorf("event horizon: %w", err)
	}
	if h.cand != nil && !slices.ContainsFunc(h.cand.writers, func(w string) bool { return slices.Contains(r.Writers, w) }) {
		h.safe = max(h.safe, h.cand.newest)
		h.cand = nil
	}
	switch {
	case len(r.Writers) == 0:
		h.safe = max(h.safe, r.Newest)
		h.cand = nil
	case h.cand == nil && r.Newest > h.safe:
		h.cand = &candidate{newest: r.Newest, writers: r.Writers}
	}
	return h.safe, nil
}

// Held reports whether the last Read stopped below events already
// committed, because transactions that may hold smaller ids were still
// running.
func (h *Horizon) Held() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cand != nil
}
