package db

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

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

// eventHorizon is a store's knowledge of the PostgreSQL horizon.
type eventHorizon struct {
	// mu is held across the horizon query: a result may only be judged
	// against a candidate read before it, so reads take turns.
	mu   sync.Mutex
	safe int64 // every event with id <= safe is final
	// cand, when set, is a newer id waiting for its writers to end.
	cand *horizonCandidate
}

type horizonCandidate struct {
	newest  int64
	writers []string // virtual transaction ids
}

// eventHorizon returns the newest id up to which the outbox is final:
// every event with a smaller or equal id that will ever exist is visible
// to statements that start after this call returns.
func (s *Store) eventHorizon(ctx context.Context) (int64, error) {
	if s.dialect != DialectPostgres {
		return math.MaxInt64, nil
	}
	h := &s.horizon
	h.mu.Lock()
	defer h.mu.Unlock()
	var r struct {
		Newest  int64          `db:"newest"`
		Writers pq.StringArray `db:"writers"`
	}
	if err := s.get(ctx, &r, horizonQuery); err != nil {
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
		h.cand = &horizonCandidate{newest: r.Newest, writers: r.Writers}
	}
	return h.safe, nil
}

// EventsHeld reports whether the last read of the outbox stopped at a
// horizon below events already committed, because transactions that may
// hold smaller ids were still running. The reader should then read again
// shortly: when such a transaction aborts, or writes no event, no NOTIFY
// follows. Always false on SQLite.
func (s *Store) EventsHeld() bool {
	if s.dialect != DialectPostgres {
		return false
	}
	s.horizon.mu.Lock()
	defer s.horizon.mu.Unlock()
	return s.horizon.cand != nil
}

// notifier sends the PostgreSQL NOTIFY that wakes other instances after
// transactions that wrote events have committed. It is not sent inside
// those transactions: PostgreSQL serialises the commits of every
// transaction that notifies (a database-wide lock held through commit,
// which keeps its queue in commit order), which would queue all writers
// behind one another again. Wake-ups are coalesced: while one NOTIFY is on
// its way, any number of commits ask for one more, and the next is sent
// notifyGap after the last at the soonest. A NOTIFY is a transaction of its
// own, with an id and a commit flushed to disk: sent back to back under a
// steady stream of orders it took about a tenth of the database's
// throughput (pgbench: 7,312 orders/s alone, 6,433 beside a notifying
// loop), for wake-ups nobody needs more often. In-process listeners
// are woken directly (Store.OnEvent). A NOTIFY lost to a crash between the
// commit and here costs other instances only their poll interval.
type notifier struct {
	kick   chan struct{} // one slot: a NOTIFY is wanted
	ctx    context.Context
	cancel context.CancelFunc // ends the goroutine; idempotent
	wg     sync.WaitGroup
}

// notifyTimeout bounds one NOTIFY.
const notifyTimeout = 5 * time.Second

// notifyGap is the least time between two NOTIFYs: other instances learn of
// a commit at most this much later than they could.
const notifyGap = 5 * time.Millisecond

// startNotifier starts the notifier goroutine (PostgreSQL only).
func (s *Store) startNotifier() {
	n := &s.notifier
	n.kick = make(chan struct{}, 1)
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for {
			select {
			case <-n.ctx.Done():
				return
			case <-n.kick:
			}
			ctx, cancel := context.WithTimeout(n.ctx, notifyTimeout)
			// An error (database down) is not the writer's: its commit
			// stands, and listeners fall back on their poll interval.
			_, _ = s.exec(ctx, `SELECT pg_notify($1, '')`, NotifyChannel)
			cancel()
			select {
			case <-n.ctx.Done():
				return
			case <-time.After(notifyGap):
			}
		}
	}()
}

// notifyOthers asks the notifier for a NOTIFY; it never blocks.
func (s *Store) notifyOthers() {
	if s.notifier.kick == nil {
		return
	}
	select {
	case s.notifier.kick <- struct{}{}:
	default: // one is already wanted; it will cover this commit too
	}
}

// stopNotifier ends the notifier goroutine and waits for it.
func (s *Store) stopNotifier() {
	n := &s.notifier
	if n.cancel == nil {
		return
	}
	n.cancel()
	n.wg.Wait()
}
