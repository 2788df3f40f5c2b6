// Package stmtcache keeps one prepared statement per query text for the
// store, and runs queries through it, on the pool or in a transaction.
//
// Preparing once matters: SQLite spends about a quarter of a hot read
// parsing SQL, and lib/pq otherwise prepares in a round trip of its own
// before every call. database/sql prepares each statement again on every
// pooled connection that runs it, and reuses it inside transactions on
// that connection.
package stmtcache

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
)

// MaxStmts bounds the cache: list queries vary with their filters (an IN
// list per length), and past this many shapes a query simply runs
// unprepared.
const MaxStmts = 512

// Cache is the statement cache of one database handle. It is safe for
// concurrent use.
type Cache struct {
	db *sqlx.DB

	mu        sync.RWMutex
	m         map[string]*sqlx.Stmt
	preparing map[string]bool
	// closed is set by Close: nothing is prepared or started after it.
	closed bool
	// background counts PrepareSoon's goroutines, which Close waits for:
	// one still preparing would open a connection to the database (on
	// SQLite, files beside it) after the store was closed.
	background sync.WaitGroup

	// trace, set by tests (Trace), is told every query run through the
	// cache and its arguments.
	trace atomic.Pointer[func(query string, args []any)]
}

// Trace makes the cache call fn with every query it runs, prepared or
// not, and its arguments, before running it: for tests that look at what
// a store asked (the plans test EXPLAINs each). nil stops it.
func (c *Cache) Trace(fn func(query string, args []any)) {
	if fn == nil {
		c.trace.Store(nil)
		return
	}
	c.trace.Store(&fn)
}

// traced tells the tracer, if any, of query.
func (c *Cache) traced(query string, args []any) {
	if fn := c.trace.Load(); fn != nil {
		(*fn)(query, args)
	}
}

// New returns an empty cache over db.
func New(db *sqlx.DB) *Cache { return &Cache{db: db} }

// cached returns the prepared statement for query, nil when there is none.
func (c *Cache) cached(query string) *sqlx.Stmt {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[query]
}

// stmt returns the cached statement for query, preparing it on first use.
// It returns nil while another goroutine prepares it, when the cache is
// full, or when preparing failed: the caller then runs the query directly
// (and meets the same error, if any). The cache lock is never held while
// database/sql works, whose own locks may wait on busy connections.
func (c *Cache) stmt(ctx context.Context, query string) *sqlx.Stmt {
	c.mu.Lock()
	if st, ok := c.m[query]; ok {
		c.mu.Unlock()
		return st
	}
	if c.closed || c.preparing[query] || len(c.m) >= MaxStmts {
		c.mu.Unlock()
		return nil
	}
	if c.preparing == nil {
		c.preparing = make(map[string]bool)
	}
	c.preparing[query] = true
	c.mu.Unlock()

	st, err := c.db.PreparexContext(ctx, query)

	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.preparing, query)
	if err != nil {
		return nil
	}
	if c.closed {
		st.Close()
		return nil
	}
	if c.m == nil {
		c.m = make(map[string]*sqlx.Stmt)
	}
	c.m[query] = st
	return st
}

// prepareSoon prepares query in the background for later transactions. A
// transaction must not prepare through the pool itself: it holds its own
// connection and row locks, and waiting for a second connection while
// every other one waits for its locks would deadlock.
func (c *Cache) prepareSoon(query string) {
	c.mu.Lock()
	busy := c.closed || c.preparing[query] || c.m[query] != nil || len(c.m) >= MaxStmts
	if !busy {
		c.background.Add(1)
	}
	c.mu.Unlock()
	if busy {
		return
	}
	go func() {
		defer c.background.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c.stmt(ctx, query)
	}()
}

// Close stops preparing, waits for the statements being prepared in the
// background and releases every cached statement.
func (c *Cache) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.background.Wait()
	c.mu.Lock()
	stmts := c.m
	c.m = nil
	c.mu.Unlock()
	for _, st := range stmts {
		st.Close()
	}
}

// Queries lists the texts of the cached statements, for tests.
func (c *Cache) Queries() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	qs := make([]string, 0, len(c.m))
	for q := range c.m {
		qs = append(qs, q)
	}
	return qs
}

// Get runs a query for one row on the pool, through its prepared
// statement when it has one.
func (c *Cache) Get(ctx context.Context, dest any, query string, args ...any) error {
	c.traced(query, args)
	if st := c.stmt(ctx, query); st != nil {
		return st.GetContext(ctx, dest, args...)
	}
	return c.db.GetContext(ctx, dest, query, args...)
}

// Select runs a query for many rows; see Get.
func (c *Cache) Select(ctx context.Context, dest any, query string, args ...any) error {
	c.traced(query, args)
	if st := c.stmt(ctx, query); st != nil {
		return st.SelectContext(ctx, dest, args...)
	}
	return c.db.SelectContext(ctx, dest, query, args...)
}

// Exec runs a statement that returns no rows; see Get.
func (c *Cache) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	c.traced(query, args)
	if st := c.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return c.db.ExecContext(ctx, query, args...)
}

// SelectOnce runs a query for many rows on the pool as a one-off
// statement, never prepared: PostgreSQL plans it for its actual
// arguments each time (a list whose best plan depends on its values).
func (c *Cache) SelectOnce(ctx context.Context, dest any, query string, args ...any) error {
	c.traced(query, args)
	return c.db.SelectContext(ctx, dest, query, args...)
}

// TxGet runs a query for one row in the transaction tx: through its
// prepared statement when there is one (database/sql prepares it on the
// transaction's own connection if needed), else directly while it is
// prepared for next time.
func (c *Cache) TxGet(ctx context.Context, tx *sqlx.Tx, dest any, query string, args ...any) error {
	c.traced(query, args)
	if st := c.cached(query); st != nil {
		return tx.StmtxContext(ctx, st).GetContext(ctx, dest, args...)
	}
	c.prepareSoon(query)
	return tx.GetContext(ctx, dest, query, args...)
}

// TxSelect runs a query for rows in tx; see TxGet.
func (c *Cache) TxSelect(ctx context.Context, tx *sqlx.Tx, dest any, query string, args ...any) error {
	if st := c.cached(query); st != nil {
		return tx.StmtxContext(ctx, st).SelectContext(ctx, dest, args...)
	}
	c.prepareSoon(query)
	return tx.SelectContext(ctx, dest, query, args...)
}

// TxExec runs a statement that returns no rows in tx; see TxGet.
func (c *Cache) TxExec(ctx context.Context, tx *sqlx.Tx, query string, args ...any) (sql.Result, error) {
	c.traced(query, args)
	if st := c.cached(query); st != nil {
		return tx.StmtxContext(ctx, st).ExecContext(ctx, args...)
	}
	c.prepareSoon(query)
	return tx.ExecContext(ctx, query, args...)
}
