package events

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"petstore/db"
	"petstore/db/dbtest"
)

// writerTx is a transaction of another writer, outside the store, so the
// test decides when it commits.
type writerTx struct {
	t  *testing.T
	tx *sqlx.Tx
}

// beginWriter opens a transaction on its own connection to rawURL.
func beginWriter(t *testing.T, rawURL string) *writerTx {
	t.Helper()
	x, err := sqlx.Open("postgres", rawURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	tx, err := x.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	// The store's writers have a transaction id before they draw an event
	// id (see db.Store.EventsAfter); so does this one.
	if _, err := tx.Exec(`SELECT pg_current_xact_id()`); err != nil {
		t.Fatal(err)
	}
	return &writerTx{t: t, tx: tx}
}

// insert writes one event of type typ and returns its id.
func (w *writerTx) insert(typ string) int64 {
	w.t.Helper()
	var id int64
	if err := w.tx.QueryRow(`INSERT INTO events (type, data, created_at) VALUES ($1, '{}', $2) RETURNING id`,
		typ, dbtest.Present(w.t)).Scan(&id); err != nil {
		w.t.Fatal(err)
	}
	return id
}

func (w *writerTx) commit() {
	w.t.Helper()
	if err := w.tx.Commit(); err != nil {
		w.t.Fatal(err)
	}
}

// wantQuiet fails when an event arrives within d (comments are fine).
func (s *sseStream) wantQuiet(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case f, ok := <-s.frames:
			if !ok {
				t.Fatalf("stream ended: %v", s.err)
			}
			if f.Comment == "" {
				t.Fatalf("event %s %s arrived while a transaction holding a smaller id was still open", f.ID, f.Event)
			}
		case <-deadline:
			return
		}
	}
}

// wantIDs reads len(ids) events and checks their ids and types in order.
func (s *sseStream) wantIDs(t *testing.T, ids []int64, types []string) {
	t.Helper()
	for i, id := range ids {
		f := s.nextEvent(t, 5*time.Second)
		if f.ID != fmt.Sprint(id) || f.Event != types[i] {
			t.Fatalf("event %d = id %s %s, want id %d %s", i, f.ID, f.Event, id, types[i])
		}
	}
}

// TestPostgresOutOfOrderCommits commits two events out of id order: the
// transaction holding the smaller id commits last (or aborts). A live
// stream and a resuming one must each deliver every committed event, in id
// order, once: a reader that delivered the larger id first would move its
// cursor past the smaller one and never send it.
func TestPostgresOutOfOrderCommits(t *testing.T) {
	for _, commitFirst := range []bool{true, false} {
		name := "smaller id commits last"
		if !commitFirst {
			name = "smaller id aborts"
		}
		t.Run(name, func(t *testing.T) {
			raw := dbtest.PostgresURL(t)
			s := openPostgres(t, raw, true)
			// Writers here are outside the store: the test wakes the hub as
			// their NOTIFY would. With no polling, an aborted writer (no
			// NOTIFY) is noticed only by the hub's HeldRecheck.
			h, u, _ := newServer(t, s, serverOptions{hub: noPoll})
			live := openStream(t, u, nil)
			before := lastID(t, s)

			small := beginWriter(t, raw)
			large := beginWriter(t, raw)
			first := small.insert("test.first")
			second := large.insert("test.second")
			if second <= first {
				t.Fatalf("ids: %d then %d, want increasing", first, second)
			}
			large.commit()
			h.Wake()

			if got := eventsAfter(t, s, before); len(got) != 0 {
				t.Fatalf("events after %d while id %d is uncommitted: got %d (first id %d), want none", before, first, len(got), got[0].ID)
			}
			if !s.EventsHeld() {
				t.Errorf("EventsHeld = false with committed id %d above an open transaction", second)
			}
			if got := lastID(t, s); got != before {
				t.Errorf("LastEventID = %d while id %d is uncommitted, want %d", got, first, before)
			}
			resumed := openStream(t, u, map[string]string{HeaderLastEventID: fmt.Sprint(before)})
			live.wantQuiet(t, 300*time.Millisecond)
			resumed.wantQuiet(t, 50*time.Millisecond)

			ids, types := []int64{first, second}, []string{"test.first", "test.second"}
			if commitFirst {
				small.commit()
				h.Wake()
			} else {
				if err := small.tx.Rollback(); err != nil {
					t.Fatal(err)
				}
				ids, types = ids[1:], types[1:]
			}
			live.wantIDs(t, ids, types)
			resumed.wantIDs(t, ids, types)

			// Nothing twice: the next event on each stream is a new one.
			after := beginWriter(t, raw)
			third := after.insert("test.third")
			after.commit()
			h.Wake()
			live.wantIDs(t, []int64{third}, []string{"test.third"})
			resumed.wantIDs(t, []int64{third}, []string{"test.third"})
			if got := lastID(t, s); got != third {
				t.Errorf("LastEventID = %d once every writer ended, want %d", got, third)
			}
		})
	}
}

// TestPostgresConcurrentWritersStream runs writers that commit in whatever
// order the server lets them while a stream reads: the stream must be
// exactly the outbox, in id order, each event once.
func TestPostgresConcurrentWritersStream(t *testing.T) {
	raw := dbtest.PostgresURL(t)
	s := openPostgres(t, raw, true)
	h, u, _ := newServer(t, s, serverOptions{hub: noPoll})
	s.OnEvent(h.Wake)
	cat := mustCategory(t, s, "Birds")
	const writers, each = 8, 25
	one := int64(1)
	pets := make([]*db.Pet, writers)
	for i := range pets {
		pets[i] = mustPet(t, s, cat.ID, fmt.Sprint("Tweety ", i))
	}
	from := lastID(t, s)
	st := openStream(t, u, nil)

	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range each {
				// Restocks (a transaction) and lone orders (one statement on
				// its own) alternate, with the stock always enough.
				if n%2 == 1 {
					if _, err := s.PlaceOrder(context.Background(), db.Owner{ShopperID: "s"}, db.NewOrder{PetID: &pets[i].ID, Quantity: &one}); err != nil {
						t.Errorf("place order: %v", err)
						return
					}
					continue
				}
				qty := int64(100 + n)
				if _, err := s.SetInventory(context.Background(), pets[i].ID, db.InventoryUpdate{Quantity: &qty}); err != nil {
					t.Errorf("set inventory: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	want := eventsAfter(t, s, from)
	// A restock writes one event, an order two (inventory, then the order).
	if n := writers * (each/2*3 + each%2); len(want) != n {
		t.Fatalf("outbox has %d events after %d, want %d", len(want), from, n)
	}
	st.wantEvents(t, want, 5*time.Second)
	st.wantQuiet(t, 100*time.Millisecond)
}
