package db_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// lines is a test's import parser: "name,category,quantity" a line, no
// header, checked by db.CatalogRow.Validate (web/petcsv reads real files).
func lines(s *db.Store) db.ImportParser {
	return func(r io.Reader, emit func(*db.CatalogRow) error) error {
		return readLines(r, s.Now().UTC(), emit)
	}
}

func readLines(r io.Reader, today time.Time, emit func(*db.CatalogRow) error) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Split(sc.Text(), ",")
		row := &db.CatalogRow{Name: &f[0], Category: &f[1], Quantity: &f[2]}
		if err := row.Validate(today); err != nil {
			return err
		}
		if err := emit(row); err != nil {
			return err
		}
	}
	return sc.Err()
}

// noJob stands for the queue: the tests run the import themselves.
func noJob(context.Context, *sql.Tx, int64) error { return nil }

// mustQueueImport stores file as a queued import of n rows.
func mustQueueImport(t *testing.T, s *db.Store, file string, n int64) *db.Import {
	t.Helper()
	im, err := s.CreateImport(context.Background(), strings.NewReader(file), n, noJob)
	if err != nil {
		t.Fatal(err)
	}
	return im
}

// catalogFile is n pets over 3 categories, stock i%3 (0 is sold).
func catalogFile(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "Pet %d,Cat %d,%d\n", i, i%3, i%3)
	}
	return b.String()
}

// TestImportFailureLeavesNothing: an import whose transaction fails half
// way (a fault after 2,000 of 3,000 rows) writes nothing — no pet,
// category, event or audit entry — and leaves the console's counts
// (pet_counts) and the catalog's counter as they were; the import is
// failed with a user-safe message and its file dropped. The same import
// run again after the fault is gone writes everything, and the counts are
// exact. One import queued or running at a time (import_running).
func TestImportFailureLeavesNothing(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		ctx := context.Background()
		MustCreatePet(t, ctx, s, MustCreateCategory(t, ctx, s, "Dogs").ID, "Rex", 1)
		version, _ := s.CatalogVersion(ctx)
		counts, _ := s.CountPetsByCategory(ctx)

		const n = 3000
		file := catalogFile(n)
		im := mustQueueImport(t, s, file, n)
		if _, err := s.CreateImport(ctx, strings.NewReader(file), n, noJob); db.ErrorCode(err) != db.EImportRunning {
			t.Fatalf("a second import: %v, want import_running", err)
		}

		s.FailImportsAfter(2000)
		started, ok, err := s.StartImport(ctx, im.ID)
		if err != nil || !ok {
			t.Fatalf("start: %v %v", ok, err)
		}
		if _, err := s.RunImport(ctx, started, lines(s), nil, nil); err == nil {
			t.Fatal("the import with a fault succeeded")
		}
		// What the job does with a failure it cannot show (web/imports).
		if err := s.FailImport(ctx, im.ID, []db.FieldError{{Field: "import", Message: "The catalog could not be written."}}); err != nil {
			t.Fatal(err)
		}
		for table, want := range map[string]int{"pets": 1, "categories": 1, "inventory": 1, "import_chunks": 0} {
			if got := countRows(t, s, table); got != want {
				t.Errorf("%d rows in %s after the failed import, want %d", got, table, want)
			}
		}
		var events, audits int
		_ = s.DB().GetContext(ctx, &events, `SELECT count(*) FROM events`)
		_ = s.DB().GetContext(ctx, &audits, `SELECT count(*) FROM audit_log WHERE action = 'catalog.import'`)
		if events != 1 || audits != 0 {
			t.Errorf("%d events (want 1, Rex's) and %d import audit entries (want 0)", events, audits)
		}
		// (The catalog version may have moved: the hidden batches bumped
		// it, which costs a client a fresh read of the same answer.)
		_ = version
		if got, _ := s.CountPetsByCategory(ctx); fmt.Sprint(got) != fmt.Sprint(counts) {
			t.Errorf("pet counts %v after the failed import, %v before", got, counts)
		}
		failed, err := s.FindImportByID(ctx, im.ID)
		if err != nil || failed.Status != db.ImportFailed || failed.FinishedAt == nil || len(failed.Errors) != 1 || failed.Errors[0].Field != "import" {
			t.Fatalf("import %+v (%v), want failed with the job's message", failed, err)
		}

		// Without the fault, a new import of the same file writes it all.
		s.FailImportsAfter(0)
		im = mustQueueImport(t, s, file, n)
		started, _, _ = s.StartImport(ctx, im.ID)
		var progress []int64
		if _, err := s.RunImport(ctx, started, lines(s), func(n int64) { progress = append(progress, n) }, nil); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(progress) != "[1000 2000 3000]" {
			t.Errorf("progress %v, want a report per batch of 1,000", progress)
		}
		got, _ := s.CountPetsByCategory(ctx)
		total := 0
		for _, c := range got {
			total += c
		}
		if len(got) != 4 || total != n+1 {
			t.Errorf("pet counts %v, want %d pets in 4 categories", got, n+1)
		}
		if v, _ := s.CatalogVersion(ctx); v == version {
			t.Error("the catalog version did not move with the import")
		}
		done, _ := s.FindImportByID(ctx, im.ID)
		if done.Status != db.ImportSucceeded || done.Processed != n || len(done.Errors) != 0 {
			t.Errorf("import %+v, want succeeded", done)
		}
		// A job run again after it committed (River lost its completion)
		// finds nothing to do.
		if _, ok, err := s.StartImport(ctx, im.ID); ok || err != nil {
			t.Errorf("a finished import starts again: %v %v", ok, err)
		}
	})
}

// TestImportProgressVisible: an import's progress is committed with each
// batch (its own transaction), so GET reads it while the import runs, on
// every instance; the rows themselves stay hidden until the end.
func TestImportProgressVisible(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		ctx := context.Background()
		im := mustQueueImport(t, s, catalogFile(2500), 2500)
		started, _, _ := s.StartImport(ctx, im.ID)
		var seen []int64
		_, err := s.RunImport(ctx, started, lines(s), func(n int64) {
			got, err := s.FindImportByID(ctx, im.ID)
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, got.Processed)
			if pets, _, err := s.FindPets(ctx, db.PetFilter{Page: db.Page{Limit: 10}}); err != nil || len(pets) != 0 {
				t.Errorf("%d pets visible after %d rows written (%v), want 0 until the import succeeds", len(pets), n, err)
			}
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(seen) != "[1000 2000 2500]" {
			t.Errorf("progress read while running: %v, want [1000 2000 2500]", seen)
		}
		if pets, _, err := s.FindPets(ctx, db.PetFilter{Page: db.Page{Limit: 100}}); err != nil || len(pets) != 100 {
			t.Errorf("%d pets visible after the import (%v), want a page of 100", len(pets), err)
		}
	})
}

// TestImportWrittenOnce: two runs of the same import at once (its job run
// again while the first run still writes) write it once: a run whose
// batch finds the import's count moved on without it stops.
func TestImportWrittenOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		ctx := context.Background()
		const n = 2000
		im := mustQueueImport(t, s, catalogFile(n), n)
		started, ok, err := s.StartImport(ctx, im.ID)
		if err != nil || !ok {
			t.Fatalf("start: %v %v", ok, err)
		}
		errs := make(chan error, 2)
		for range 2 {
			go func() { _, err := s.RunImport(ctx, started, lines(s), nil, nil); errs <- err }()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Errorf("a run: %v", err)
			}
		}
		if got := countRows(t, s, "pets"); got != n {
			t.Errorf("%d pets after two runs of one import of %d", got, n)
		}
		done, err := s.FindImportByID(ctx, im.ID)
		if err != nil || done.Status != db.ImportSucceeded || done.Processed != n {
			t.Errorf("import %+v (%v), want succeeded with %d rows", done, err, n)
		}
	})
}
