package db

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"petstore/db/internal/outage"
)

// One retry rule for transient conflicts: a transaction that fails with
// PostgreSQL's serialization failure (40001) or deadlock (40P01), or with
// SQLite busy or locked past its busy_timeout, is run again from its start,
// at most txAttempts times in all, after a jittered pause. Only a
// transaction function with no effect outside its transaction is run by
// inTx (it may compute, read and write in tx, nothing else): what it
// returns comes from the attempt that committed.

// txAttempts bounds the attempts of one transaction.
const txAttempts = 3

// txRetryPause is the mean pause before the first retry; it doubles per
// retry and is jittered ±50% so two transactions that collided do not
// collide again in step.
const txRetryPause = 10 * time.Millisecond

// txRetries counts the retries by conflict code (outage.Conflicts).
type txRetries struct {
	serialization, deadlock, busy, locked atomic.Int64
}

func (r *txRetries) counter(code string) *atomic.Int64 {
	switch code {
	case outage.ConflictSerialization:
		return &r.serialization
	case outage.ConflictDeadlock:
		return &r.deadlock
	case outage.ConflictSQLiteBusy:
		return &r.busy
	default:
		return &r.locked
	}
}

// TxRetries is how many times the store ran a transaction again after a
// transient conflict, by code: "40001", "40P01", "sqlite_busy",
// "sqlite_locked" (every code is present).
func (s *Store) TxRetries() map[string]int64 {
	out := make(map[string]int64, len(outage.Conflicts))
	for _, code := range outage.Conflicts {
		out[code] = s.retries.counter(code).Load()
	}
	return out
}

// TxRetryCodes are the codes of TxRetries.
func TxRetryCodes() []string { return append([]string(nil), outage.Conflicts...) }

// inTx runs fn in a write transaction and commits it, running the whole
// of it again (a new transaction, a new tx.now) after a transient
// conflict, at most txAttempts times. fn must have no effect outside tx.
func inTx[T any](ctx context.Context, s *Store, fn func(tx *Tx) (T, error)) (T, error) {
	var v T
	err := s.retry(ctx, func() (err error) {
		v, err = runTx(ctx, s, fn)
		return err
	})
	return v, err
}

// retry runs attempt, a whole transaction from its begin to its commit,
// and again after a transient conflict, at most txAttempts times in all,
// after a jittered pause that doubles per retry: the rule inTx applies,
// for the transactions that run themselves (a batch of orders).
func (s *Store) retry(ctx context.Context, attempt func() error) error {
	for n := 1; ; n++ {
		err := attempt()
		code := outage.Conflict(err)
		if code == "" || n == txAttempts || ctx.Err() != nil {
			return err
		}
		s.retries.counter(code).Add(1)
		pause := txRetryPause << (n - 1)
		pause = pause/2 + rand.N(pause)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

// runTx is one attempt of inTx.
func runTx[T any](ctx context.Context, s *Store, fn func(tx *Tx) (T, error)) (T, error) {
	var zero T
	tx, err := s.begin(ctx)
	if err != nil {
		return zero, err
	}
	defer tx.Rollback()
	v, err := fn(tx)
	if err != nil {
		return zero, err
	}
	if err := tx.Commit(); err != nil {
		return zero, err
	}
	return v, nil
}

// inTxDo is inTx for a transaction function that returns nothing but its
// error.
func inTxDo(ctx context.Context, s *Store, fn func(tx *Tx) error) error {
	_, err := inTx(ctx, s, func(tx *Tx) (struct{}, error) { return struct{}{}, fn(tx) })
	return err
}
