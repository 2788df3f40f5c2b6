package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// The outbox relay (SPEC §15, issue 40): a change's transaction writes its
// events only (§8); the relay turns committed events into the work they
// cause (a webhook's deliveries and their jobs, later emails) after the
// commit, in batches. Its position, the newest event relayed, is moved in
// the same transaction as the work it queued, so a crash loses nothing and
// queues nothing twice; a rolled-back change has no committed event and
// causes nothing. web/queue runs it (Queue.Relay) and says what each kind
// of job makes of a batch.

// RelayBatch is a run of committed events, oldest first, in the
// transaction that turns them into work and moves the relay past them.
type RelayBatch struct {
	// From and To bound the batch: the events with From < id <= To.
	From, To int64
	tx       *Tx
}

// SQLTx is the batch's transaction, for River's InsertManyTx.
func (b *RelayBatch) SQLTx() *sql.Tx { return b.tx.Tx.Tx }

// Events returns the batch's events, oldest first.
func (b *RelayBatch) Events(ctx context.Context) ([]Event, error) {
	var rows []struct {
		ID        int64     `db:"id"`
		Type      string    `db:"type"`
		Data      string    `db:"data"`
		CreatedAt time.Time `db:"created_at"`
		Trace     *string   `db:"traceparent"`
	}
	err := b.tx.sel(ctx, &rows, `SELECT id, type, data, created_at, traceparent FROM events WHERE id > $1 AND id <= $2 ORDER BY id`, b.From, b.To)
	if err != nil {
		return nil, fmt.Errorf("relay events: %w", err)
	}
	evs := make([]Event, len(rows))
	for i, r := range rows {
		evs[i] = Event{ID: r.ID, Type: r.Type, Data: json.RawMessage(r.Data), CreatedAt: r.CreatedAt, Traceparent: r.Trace}
	}
	return evs, nil
}

// RelayRun is what one run of RelayEvents did.
type RelayRun struct {
	// Events is how many events the batch held: 0 when the relay was
	// caught up.
	Events int
	// Held: on PostgreSQL, committed events wait above the horizon for
	// transactions that may still commit smaller ids; run again shortly
	// (no wake-up may come: such a transaction may abort).
	Held bool
}

// RelayEvents runs work over the next committed events after the relay's
// position, at most limit of them, in one transaction that moves the
// position past them. When the relay is caught up it begins no write
// transaction. An error of work rolls the batch back; the events stay for
// the next run.
//
// One relay runs at a time per store, across instances: the position's row
// is locked (PostgreSQL; SQLite has one writer anyway), and a relay that
// waited for it reads the position its predecessor committed. On
// PostgreSQL the events read stop at the horizon (db/internal/outbox), so
// an event that commits late with a smaller id is never skipped.
func (s *Store) RelayEvents(ctx context.Context, limit int, work func(ctx context.Context, b *RelayBatch) error) (RelayRun, error) {
	var run RelayRun
	var peek struct {
		After  int64 `db:"after_event_id"`
		Newest int64 `db:"newest"`
	}
	err := s.get(ctx, &peek, `SELECT after_event_id, (SELECT COALESCE(MAX(id), 0) FROM events) AS newest FROM event_relay WHERE id = 1`)
	if err != nil {
		return run, fmt.Errorf("relay events: position: %w", err)
	}
	if peek.Newest <= peek.After {
		return run, nil // the usual answer of an idle store: one small read
	}
	horizon := int64(math.MaxInt64) // SQLite's single writer commits ids in order
	if s.dialect == DialectPostgres {
		if horizon, err = s.relayHorizon.Read(ctx, s.get); err != nil {
			return run, fmt.Errorf("relay events: %w", err)
		}
		if run.Held = s.relayHorizon.Held(); horizon <= peek.After {
			return run, nil
		}
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return run, err
	}
	defer tx.Rollback()
	q := `SELECT after_event_id FROM event_relay WHERE id = 1`
	if s.dialect == DialectPostgres {
		q += ` FOR UPDATE`
	}
	b := &RelayBatch{tx: tx}
	if err := tx.get(ctx, &b.From, q); err != nil {
		return run, fmt.Errorf("relay events: lock position: %w", err)
	}
	var next struct {
		N    int   `db:"n"`
		Last int64 `db:"last"`
	}
	err = tx.get(ctx, &next, `SELECT count(*) AS n, COALESCE(MAX(id), 0) AS last
		FROM (SELECT id FROM events WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3) e`, b.From, horizon, limit)
	if err != nil {
		return run, fmt.Errorf("relay events: %w", err)
	}
	if next.N == 0 {
		return run, nil // another relay got here first
	}
	b.To = next.Last
	if err := work(ctx, b); err != nil {
		return run, err
	}
	if _, err := tx.exec(ctx, `UPDATE event_relay SET after_event_id = $1 WHERE id = 1`, b.To); err != nil {
		return run, fmt.Errorf("relay events: move position: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return run, err
	}
	run.Events = next.N
	return run, nil
}
