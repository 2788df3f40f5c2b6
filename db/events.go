package db

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Event types of SPEC §8 (order.updated is additive: a ship date change).
const (
	EventPetCreated       = "pet.created"
	EventPetUpdated       = "pet.updated"
	EventPetDeleted       = "pet.deleted"
	EventInventoryUpdated = "inventory.updated"
	EventOrderCreated     = "order.created"
	EventOrderUpdated     = "order.updated"
	EventOrderCompleted   = "order.completed"
	EventOrderCancelled   = "order.cancelled"
)

// NotifyChannel is the PostgreSQL channel instances wake each other on.
const NotifyChannel = "petstore_events"

// Event is one row of the outbox: the resource as the API shows it.
type Event struct {
	ID        int64           `db:"id"`
	Type      string          `db:"type"`
	Data      json.RawMessage `db:"data"`
	CreatedAt time.Time       `db:"created_at"`
}

// addEvent writes an event in the transaction that made the change. On
// PostgreSQL an advisory lock makes event ids commit in order, so a reader
// that has seen id n never later finds a smaller id appear; NOTIFY is
// delivered on commit.
func (tx *Tx) addEvent(ctx context.Context, typ string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	if tx.dialect() == DialectPostgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7215001)`); err != nil {
			return fmt.Errorf("lock events: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO events (type, data, created_at) VALUES ($1, $2, $3)`, typ, string(b), tx.now); err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	if tx.dialect() == DialectPostgres && !tx.events {
		if _, err := tx.ExecContext(ctx, `SELECT pg_notify($1, '')`, NotifyChannel); err != nil {
			return fmt.Errorf("notify: %w", err)
		}
	}
	tx.events = true
	return nil
}

// EventsAfter returns up to limit events with id > after, oldest first.
func (s *Store) EventsAfter(ctx context.Context, after int64, limit int) ([]Event, error) {
	// data is TEXT: both drivers hand it over as a string, which
	// database/sql will not store into a json.RawMessage.
	var rows []struct {
		ID        int64     `db:"id"`
		Type      string    `db:"type"`
		Data      string    `db:"data"`
		CreatedAt time.Time `db:"created_at"`
	}
	err := s.db.SelectContext(ctx, &rows, `SELECT id, type, data, created_at FROM events WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("events after: %w", err)
	}
	evs := make([]Event, len(rows))
	for i, r := range rows {
		evs[i] = Event{ID: r.ID, Type: r.Type, Data: json.RawMessage(r.Data), CreatedAt: r.CreatedAt}
	}
	return evs, nil
}

// LastEventID is the newest event's id, 0 when there is none.
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.db.GetContext(ctx, &id, `SELECT COALESCE(MAX(id), 0) FROM events`); err != nil {
		return 0, fmt.Errorf("last event: %w", err)
	}
	return id, nil
}
