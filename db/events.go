package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/lib/pq"
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
	// EventCatalogImported is a catalog import's one event (SPEC §18):
	// CatalogImported, never a pet.created per row.
	EventCatalogImported = "catalog.imported"
)

// CatalogImported is the data of a catalog.imported event: the import,
// how many pets it brought (listed by GET /api/pets?importId=) and how
// many categories it created.
type CatalogImported struct {
	ImportID          int64 `json:"importId"`
	Rows              int64 `json:"rows"`
	CategoriesCreated int64 `json:"categoriesCreated"`
}

// NotifyChannel is the PostgreSQL channel instances wake each other on.
const NotifyChannel = "petstore_events"

// Event is one row of the outbox: the resource as the API shows it.
type Event struct {
	ID        int64           `db:"id"`
	Type      string          `db:"type"`
	Data      json.RawMessage `db:"data"`
	CreatedAt time.Time       `db:"created_at"`
	// Traceparent is the change's span (Traceparent), read by the relay
	// only: nil elsewhere.
	Traceparent *string `db:"traceparent"`
}

// pendingEvent is an event recorded in a transaction, written at commit.
type pendingEvent struct {
	typ  string
	data string
	// traceparent, when set, is the span of a change other than the
	// transaction's own: an order of a batch, placed for another request
	// (eventsOf). Nil: the transaction's.
	traceparent *string
}

// eventsOf marks the events recorded since from as the change of ctx's
// span (a batched order's own request), when it has one.
func (tx *Tx) eventsOf(ctx context.Context, from int) {
	tp := Traceparent(ctx)
	if tp == nil {
		return
	}
	for i := from; i < len(tx.events); i++ {
		tx.events[i].traceparent = tp
	}
}

// eventTraceparents is each event's traceparent when some differ from the
// transaction's own (tp), nil when all are tp: the statement then takes
// one value for all, as it always does with tracing off.
func (tx *Tx) eventTraceparents(tp *string) []sql.NullString {
	var each []sql.NullString
	for i, e := range tx.events {
		if e.traceparent == nil {
			continue
		}
		if each == nil {
			each = make([]sql.NullString, len(tx.events))
			for j := range each {
				if tp != nil {
					each[j] = sql.NullString{String: *tp, Valid: true}
				}
			}
		}
		each[i] = sql.NullString{String: *e.traceparent, Valid: true}
	}
	return each
}

// addEvent records an event of the change the transaction makes. The
// events are written together just before the commit (flushEvents), in one
// statement, in the order they were recorded.
func (tx *Tx) addEvent(_ context.Context, typ string, data any) error {
	e, err := newEvent(typ, data)
	if err != nil {
		return err
	}
	tx.events = append(tx.events, e)
	return nil
}

// newEvent is an event of type typ whose data is data as the API shows it
// (its JSON).
func newEvent(typ string, data any) (pendingEvent, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return pendingEvent{}, fmt.Errorf("encode event: %w", err)
	}
	return pendingEvent{typ: typ, data: string(b)}, nil
}

// flushEvents inserts the recorded events in one statement, ids in
// recording order, each with the traceparent of the change's span (ctx:
// the transaction's, or a batched order's own: eventsOf), NULL without one. Nothing orders commits across transactions: readers
// deliver events only up to the horizon (eventHorizon), and other
// instances are woken after the commit (eventsCommitted).
func (tx *Tx) flushEvents(ctx context.Context) error {
	if len(tx.events) == 0 {
		return nil
	}
	var err error
	tp := Traceparent(ctx)
	each := tx.eventTraceparents(tp)
	switch {
	case tx.dialect() == DialectPostgres:
		err = tx.flushEventsPostgres(ctx, tp, each)
	case each != nil:
		args := make([]any, 0, 1+3*len(tx.events))
		args = append(args, tx.now)
		rows := make([]string, len(tx.events))
		for i, e := range tx.events {
			args = append(args, e.typ, e.data, each[i])
			n := len(args)
			rows[i] = fmt.Sprintf("($%d, $%d, %d, $%d)", n-2, n-1, i, n)
		}
		_, err = tx.exec(ctx, `INSERT INTO events (type, data, created_at, traceparent) SELECT v.column1, v.column2, $1, v.column4 FROM (VALUES `+
			strings.Join(rows, ", ")+`) AS v ORDER BY v.column3`, args...)
	default:
		args := make([]any, 0, 2+2*len(tx.events))
		args = append(args, tx.now, tp)
		rows := make([]string, len(tx.events))
		for i, e := range tx.events {
			args = append(args, e.typ, e.data)
			n := len(args)
			rows[i] = fmt.Sprintf("($%d, $%d, %d)", n-1, n, i)
		}
		_, err = tx.exec(ctx, `INSERT INTO events (type, data, created_at, traceparent) SELECT v.column1, v.column2, $1, $2 FROM (VALUES `+
			strings.Join(rows, ", ")+`) AS v ORDER BY v.column3`, args...)
	}
	if err != nil {
		return fmt.Errorf("write events: %w", err)
	}
	tx.wroteEvents = true
	return nil
}

// flushEventsPostgres is flushEvents' statement on PostgreSQL: the events
// as two arrays, one statement text (one prepared statement) for any
// number of them, however many orders a batch placed. The filter gives the
// transaction an id before the ids are drawn (see db/internal/outbox: the
// horizon).
func (tx *Tx) flushEventsPostgres(ctx context.Context, tp *string, each []sql.NullString) error {
	types, data := make([]string, len(tx.events)), make([]string, len(tx.events))
	for i, e := range tx.events {
		types[i], data[i] = e.typ, e.data
	}
	if each != nil {
		_, err := tx.exec(ctx, `INSERT INTO events (type, data, created_at, traceparent)
			SELECT v.t, v.d, $1, v.p FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS v(t, d, p, o)
			WHERE pg_current_xact_id() IS NOT NULL ORDER BY v.o`, tx.now, pq.Array(types), pq.Array(data), pq.Array(each))
		return err
	}
	_, err := tx.exec(ctx, `INSERT INTO events (type, data, created_at, traceparent)
		SELECT v.t, v.d, $1, $4 FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS v(t, d, o)
		WHERE pg_current_xact_id() IS NOT NULL ORDER BY v.o`, tx.now, pq.Array(types), pq.Array(data), tp)
	return err
}

// EventsAfter returns up to limit events with id > after, oldest first,
// and none beyond the horizon: on PostgreSQL an event committed while a
// transaction that may hold a smaller id still runs waits for a later read
// (see db/internal/outbox), so a reader that moves its cursor to the last id it
// got never skips one.
func (s *Store) EventsAfter(ctx context.Context, after int64, limit int) ([]Event, error) {
	horizon, err := s.eventHorizon(ctx)
	if err != nil {
		return nil, fmt.Errorf("events after: %w", err)
	}
	if horizon <= after {
		return nil, nil
	}
	// data is TEXT: both drivers hand it over as a string, which
	// database/sql will not store into a json.RawMessage.
	var rows []struct {
		ID        int64     `db:"id"`
		Type      string    `db:"type"`
		Data      string    `db:"data"`
		CreatedAt time.Time `db:"created_at"`
	}
	err = s.sel(ctx, &rows, `SELECT id, type, data, created_at FROM events WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3`, after, horizon, limit)
	if err != nil {
		return nil, fmt.Errorf("events after: %w", err)
	}
	evs := make([]Event, len(rows))
	for i, r := range rows {
		evs[i] = Event{ID: r.ID, Type: r.Type, Data: json.RawMessage(r.Data), CreatedAt: r.CreatedAt}
	}
	return evs, nil
}

// LastEventID is the newest event's id, 0 when there is none; on
// PostgreSQL the horizon, so that a stream starting after it misses no
// event that commits later with a smaller id.
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	if s.dialect == DialectPostgres {
		id, err := s.eventHorizon(ctx)
		if err != nil {
			return 0, fmt.Errorf("last event: %w", err)
		}
		return id, nil
	}
	var id int64
	if err := s.get(ctx, &id, `SELECT COALESCE(MAX(id), 0) FROM events`); err != nil {
		return 0, fmt.Errorf("last event: %w", err)
	}
	return id, nil
}

// eventHorizon returns the newest id up to which the outbox is final: on
// PostgreSQL the horizon (db/internal/outbox), on SQLite, whose single
// writer commits ids in order, every id.
func (s *Store) eventHorizon(ctx context.Context) (int64, error) {
	if s.dialect != DialectPostgres {
		return math.MaxInt64, nil
	}
	return s.horizon.Read(ctx, s.get)
}

// EventsHeld reports whether the last read of the outbox stopped at a
// horizon below events already committed, because transactions that may
// hold smaller ids were still running. The reader should then read again
// shortly: when such a transaction aborts, or writes no event, no NOTIFY
// follows. Always false on SQLite.
func (s *Store) EventsHeld() bool {
	return s.dialect == DialectPostgres && s.horizon.Held()
}

// notify wakes the other instances listening on NotifyChannel; the store's
// notifier sends it after commits that wrote events.
func (s *Store) notify(ctx context.Context) error {
	_, err := s.exec(ctx, `SELECT pg_notify($1, '')`, NotifyChannel)
	return err
}
