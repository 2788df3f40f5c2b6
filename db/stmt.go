package db

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
)

// maxCachedStmts bounds the statement cache: list queries vary with their
// filters (an IN list per length), and past this many shapes a query simply
// runs unprepared.
const maxCachedStmts = 512

// stmtCache keeps one prepared statement per query text. Preparing once
// matters: SQLite spends about a quarter of a hot read parsing SQL, and
// lib/pq otherwise prepares in a round trip of its own before every call.
// database/sql prepares each statement again on every pooled connection
// that runs it, and reuses it inside transactions on that connection.
type stmtCache struct {
	mu        sync.RWMutex
	m         map[string]*sqlx.Stmt
	preparing map[string]bool
	// closed is set by closeStmts: nothing is prepared or started after it.
	closed bool
	// background counts prepareSoon's goroutines, which closeStmts waits
	// for: one still preparing would open a connection to the database
	// (on SQLite, files beside it) after the store was closed.
	background sync.WaitGroup
}

// cached returns the prepared statement for query, nil when there is none.
func (s *Store) cached(query string) *sqlx.Stmt {
	s.stmts.mu.RLock()
	defer s.stmts.mu.RUnlock()
	return s.stmts.m[query]
}

// stmt returns the cached statement for query, preparing it on first use.
// It returns nil while another goroutine prepares it, when the cache is
// full, or when preparing failed: the caller then runs the query directly
// (and meets the same error, if any). The cache lock is never held while
// database/sql works, whose own locks may wait on busy connections.
func (s *Store) stmt(ctx context.Context, query string) *sqlx.Stmt {
	c := &s.stmts
	c.mu.Lock()
	if st, ok := c.m[query]; ok {
		c.mu.Unlock()
		return st
	}
	if c.closed || c.preparing[query] || len(c.m) >= maxCachedStmts {
		c.mu.Unlock()
		return nil
	}
	if c.preparing == nil {
		c.preparing = make(map[string]bool)
	}
	c.preparing[query] = true
	c.mu.Unlock()

	st, err := s.db.PreparexContext(ctx, query)

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
func (s *Store) prepareSoon(query string) {
	c := &s.stmts
	c.mu.Lock()
	busy := c.closed || c.preparing[query] || c.m[query] != nil || len(c.m) >= maxCachedStmts
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
		s.stmt(ctx, query)
	}()
}

// closeStmts stops preparing, waits for the statements being prepared in
// the background and releases every cached statement.
func (s *Store) closeStmts() {
	c := &s.stmts
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

// get, sel and exec run a query through the statement cache.
func (s *Store) get(ctx context.Context, dest any, query string, args ...any) error {
	if st := s.stmt(ctx, query); st != nil {
		return st.GetContext(ctx, dest, args...)
	}
	return s.db.GetContext(ctx, dest, query, args...)
}

func (s *Store) sel(ctx context.Context, dest any, query string, args ...any) error {
	if st := s.stmt(ctx, query); st != nil {
		return st.SelectContext(ctx, dest, args...)
	}
	return s.db.SelectContext(ctx, dest, query, args...)
}

func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := s.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return s.db.ExecContext(ctx, query, args...)
}

// get and exec run a query in the transaction: through its prepared
// statement when there is one (database/sql prepares it on the
// transaction's own connection if needed), else directly while it is
// prepared for next time.
func (tx *Tx) get(ctx context.Context, dest any, query string, args ...any) error {
	if st := tx.store.cached(query); st != nil {
		return tx.StmtxContext(ctx, st).GetContext(ctx, dest, args...)
	}
	tx.store.prepareSoon(query)
	return tx.GetContext(ctx, dest, query, args...)
}

func (tx *Tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := tx.store.cached(query); st != nil {
		return tx.StmtxContext(ctx, st).ExecContext(ctx, args...)
	}
	tx.store.prepareSoon(query)
	return tx.ExecContext(ctx, query, args...)
}
