package imports

import (
	"context"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web/queue"
)

// staff is the origin an import is started with (its audit entry's actor).
func staff(ctx context.Context) context.Context {
	return db.WithOrigin(ctx, db.Origin{Actor: db.StaffActor(1, "ada"), RequestID: "req-1", IP: "192.0.2.1"})
}

// newImports makes the imports of a fresh store on a clock of its own,
// over a queue that is not started.
func newImports(t *testing.T, open dbtest.Open) (*Imports, *db.Store, *queue.Queue, *dbtest.Clock) {
	t.Helper()
	s := open(t)
	clock := dbtest.NewClock(t)
	s.Now = clock.Now
	q := queue.New(s, queue.Config{PollInterval: 20 * time.Millisecond})
	im, err := New(s, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	return im, s, q, clock
}

// count counts rows of query straight from the database.
func count(t *testing.T, s *db.Store, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.DB().GetContext(context.Background(), &n, query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

const threePets = "name,category,status,price,quantity\nRex,Dogs,available,12.50,3\nTom,Cats,sold,,\nPip,Birds,,1,1\n"

// TestCreateQueuesItsJob: a good file is stored as a queued import with
// its row count and its job, in the imports queue, in the same
// transaction; while it waits another is refused (import_running), and a
// bad file stores nothing, job included.
func TestCreateQueuesItsJob(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := staff(context.Background())
		im, s, _, _ := newImports(t, open)

		_, err := im.Create(ctx, strings.NewReader("name,category,colour\nRex,Dogs,brown\n"))
		if db.ErrorCode(err) != db.EValidationFailed {
			t.Fatalf("bad file: %v, want validation_failed", err)
		}
		for _, table := range []string{"imports", "import_chunks", "river_job"} {
			if n := count(t, s, `SELECT count(*) FROM `+table); n != 0 {
				t.Fatalf("%d rows in %s after a refused file", n, table)
			}
		}

		i, err := im.Create(ctx, strings.NewReader(threePets))
		if err != nil {
			t.Fatal(err)
		}
		if i.Status != db.ImportQueued || i.Rows != 3 || i.Processed != 0 || i.FinishedAt != nil {
			t.Fatalf("created = %+v", i)
		}
		if n := count(t, s, `SELECT count(*) FROM river_job WHERE kind = $1 AND queue = $2 AND max_attempts = $3`, JobKind, JobQueue, maxAttempts); n != 1 {
			t.Fatalf("%d import jobs in queue %s with %d attempts, want 1", n, JobQueue, maxAttempts)
		}
		arg := `(args->>'importId')::bigint`
		if s.Dialect() == db.DialectSQLite {
			arg = `json_extract(args, '$.importId')` // River keeps JSONB there
		}
		if n := count(t, s, `SELECT count(*) FROM river_job WHERE `+arg+` = $1`, i.ID); n != 1 {
			t.Fatalf("no job names import %d in its args", i.ID)
		}

		_, err = im.Create(ctx, strings.NewReader(threePets))
		if db.ErrorCode(err) != db.EImportRunning {
			t.Fatalf("second import: %v, want import_running", err)
		}
		if n := count(t, s, `SELECT count(*) FROM river_job`); n != 1 {
			t.Fatalf("%d jobs after a refused second import, want 1", n)
		}
	})
}

// TestRunWritesTheCatalog: the job's run writes every row, marks the
// import succeeded with its progress, and a second run of it (a job run
// again) does nothing.
func TestRunWritesTheCatalog(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := staff(context.Background())
		im, s, _, _ := newImports(t, open)
		i, err := im.Create(ctx, strings.NewReader(threePets))
		if err != nil {
			t.Fatal(err)
		}
		if err := im.Run(context.Background(), i.ID); err != nil {
			t.Fatal(err)
		}
		got, err := im.Find(ctx, i.ID)
		if err != nil || got.Status != db.ImportSucceeded || got.Processed != 3 || got.FinishedAt == nil || len(got.Errors) != 0 {
			t.Fatalf("after its run: %+v, %v", got, err)
		}
		if n := count(t, s, `SELECT count(*) FROM pets WHERE name IN ('Rex', 'Tom', 'Pip')`); n != 3 {
			t.Fatalf("%d of the 3 pets written", n)
		}
		if err := im.Run(context.Background(), i.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, `SELECT count(*) FROM pets`); n != 3 {
			t.Fatalf("a second run left %d pets, want 3", n)
		}
		if _, err := im.Find(ctx, i.ID+1); db.ErrorCode(err) != db.ENotFound {
			t.Fatalf("unknown import: %v, want not_found", err)
		}
	})
}

// TestRunFailsAFileNoLongerValid: a file checked when it arrived that no
// longer passes when its job runs (a birth date the clock, set back, now
// puts in the future) fails the import with its problems and writes
// nothing; the run is not tried again (no error for River).
func TestRunFailsAFileNoLongerValid(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := staff(context.Background())
		im, s, _, clock := newImports(t, open)
		today := clock.Now().UTC().Format(time.DateOnly)
		i, err := im.Create(ctx, strings.NewReader("name,category,birthDate\nRex,Dogs,"+today+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		clock.Add(-48 * time.Hour)
		if err := im.Run(context.Background(), i.ID); err != nil {
			t.Fatalf("run: %v, want nil (failed for good)", err)
		}
		got, err := im.Find(ctx, i.ID)
		if err != nil || got.Status != db.ImportFailed || len(got.Errors) != 1 || got.Errors[0].Field != "row 2: birthDate" {
			t.Fatalf("after its run: %+v, %v", got, err)
		}
		if n := count(t, s, `SELECT count(*) FROM pets`) + count(t, s, `SELECT count(*) FROM import_chunks`); n != 0 {
			t.Fatalf("%d pets and chunks left by a failed import", n)
		}
	})
}

// TestQueueRunsAnImport: with the queue started, an import created is run
// by its job to the end.
func TestQueueRunsAnImport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := staff(context.Background())
		im, s, q, _ := newImports(t, open)
		if err := q.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := q.Stop(ctx); err != nil {
				t.Errorf("stop queue: %v", err)
			}
		})
		i, err := im.Create(ctx, strings.NewReader(threePets))
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			got, err := im.Find(ctx, i.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status == db.ImportSucceeded {
				break
			}
			if got.Status == db.ImportFailed || time.Now().After(deadline) {
				t.Fatalf("import = %+v, want succeeded within 20 s", got)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if n := count(t, s, `SELECT count(*) FROM pets`); n != 3 {
			t.Fatalf("%d pets, want 3", n)
		}
	})
}
