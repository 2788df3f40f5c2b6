package db_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestMigrateLargeCatalog migrates a catalog of ConcurrentIndexFrom pets
// made at version 3: PostgreSQL builds the search indexes concurrently,
// and both databases end up with valid indexes and exact pet counts.
func TestMigrateLargeCatalog(t *testing.T) {
	dbtest.EachURL(t, func(t *testing.T, rawURL string) {
		ctx := context.Background()
		s, err := db.Open(ctx, rawURL, dbtest.NewClock(t).Now)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.MigrateUpTo(ctx, 3); err != nil {
			t.Fatal(err)
		}
		c := MustCreateCategory(t, ctx, s, "Dogs")
		_, err = s.DB().ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)
			INSERT INTO pets (name, name_key, category_id, status, created_at, updated_at, deleted_at)
			SELECT 'Pet ' || i, 'pet ' || i, $2, CASE WHEN i % 20 = 0 THEN 'sold' ELSE 'available' END,
				CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CASE WHEN i % 100 = 0 THEN CURRENT_TIMESTAMP END FROM n`,
			db.ConcurrentIndexFrom, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.DB().ExecContext(ctx, `INSERT INTO inventory (pet_id, quantity, updated_at)
			SELECT id, CASE WHEN status = 'sold' THEN 0 ELSE 1 END, updated_at FROM pets`); err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if s.Dialect() == db.DialectPostgres {
			var got []string
			if err := s.DB().SelectContext(ctx, &got, `SELECT c.relname FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
				WHERE x.indrelid = 'pets'::regclass AND x.indisvalid ORDER BY c.relname`); err != nil {
				t.Fatal(err)
			}
			want := []string{"pets_category_id", "pets_category_status_id", "pets_import", "pets_name_trgm", "pets_pkey", "pets_status_id"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("valid indexes of pets (-want +got):\n%s", diff)
			}
		}
		wantCountsMatchScan(t, ctx, s)
		pets, _, err := s.FindPets(ctx, db.PetFilter{Query: "pet 999", Statuses: []string{db.StatusAvailable}})
		if err != nil {
			t.Fatal(err)
		}
		if len(pets) != 11 { // Pet 999 and Pet 9990–9999, none sold or deleted
			t.Errorf("search for pet 999: got %d pets, want 11", len(pets))
		}
	})
}
