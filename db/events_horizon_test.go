package db_test

import (
	"context"
	"testing"

	"github.com/jmoiron/sqlx"

	"petstore/db/dbtest"
)

// TestEventHorizonPostgres checks what the horizon's proof rests on, and
// that only writers of this store's events table hold it back.
func TestEventHorizonPostgres(t *testing.T) {
	ctx := context.Background()
	raw := dbtest.PostgresURL(t)
	s := dbtest.OpenURL(t, raw)

	t.Run("SequenceCacheOne", func(t *testing.T) {
		// With a cache, each session hands out ids from its own block, and
		// a smaller id could be drawn after a larger one committed.
		var cache int64
		if err := s.DB().GetContext(ctx, &cache, `SELECT s.cache_size FROM pg_sequences s
			WHERE s.schemaname = current_schema() AND s.sequencename = 'events_id_seq'`); err != nil {
			t.Fatal(err)
		}
		if cache != 1 {
			t.Fatalf("events id sequence cache = %d, want 1", cache)
		}
	})

	t.Run("OtherSchemaWriterDoesNotHoldBack", func(t *testing.T) {
		other := dbtest.OpenURL(t, dbtest.PostgresURL(t))
		x, err := sqlx.Open("postgres", raw)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		// A transaction of the other store's events table stays open.
		otx, err := other.DB().Beginx()
		if err != nil {
			t.Fatal(err)
		}
		defer otx.Rollback()
		if _, err := otx.Exec(`INSERT INTO events (type, data, created_at) VALUES ('test.other', '{}', $1)`, dbtest.Present(t)); err != nil {
			t.Fatal(err)
		}
		var id int64
		if err := x.QueryRow(`INSERT INTO events (type, data, created_at) VALUES ('test.mine', '{}', $1) RETURNING id`, dbtest.Present(t)).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if got := lastEvent(t, ctx, s); got != id {
			t.Fatalf("LastEventID = %d with only another schema's writer open, want %d", got, id)
		}
		if s.EventsHeld() {
			t.Fatal("EventsHeld = true with only another schema's writer open")
		}
	})
}
