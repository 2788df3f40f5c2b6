// Package imports runs the catalog imports of SPEC §18: an uploaded file
// is checked while it arrives and then stored (Create), and a River job
// writes it to the catalog in short transactions, hidden until all of it
// is written and shown at once (work), resuming where it stopped.
package imports

import (
	"bufio"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/riverqueue/river"

	"petstore/db"
	"petstore/web/petcsv"
	"petstore/web/queue"
)

// The River job of an import.
const (
	JobKind  = "catalog_import"
	JobQueue = "imports"
	// JobTimeout bounds one attempt of an import's job, which writes for
	// about Slice and then snoozes to take the next slice: an attempt still
	// running past it (its instance died) is made available again by
	// web/queue's rescue (JobTimeout + queue.RescueGrace, checked every
	// queue.RescueEvery), and the import resumes after the rows it wrote
	// within a minute of the crash, on any instance (SPEC §18).
	JobTimeout = 30 * time.Second
	// Slice is how long one attempt writes batches before it snoozes; the
	// rest of JobTimeout is left for the import's last transaction (which
	// shows every row at once).
	Slice = 10 * time.Second
	// maxAttempts: a run cut off (a crash, a shutdown, the database away)
	// is tried again; an import whose file fails is marked failed at once.
	maxAttempts = 5
)

// MaxBytes is the largest file an import takes (SPEC §18: 50 MiB).
const MaxBytes = 50 << 20

// jobArgs are an import job's args.
type jobArgs struct {
	ImportID int64 `json:"importId"`
}

// Kind is the River kind of the import jobs.
func (jobArgs) Kind() string { return JobKind }

// Imports creates, runs and reports the imports of one instance.
type Imports struct {
	store  *db.Store
	logger *slog.Logger
	// queue inserts an import's job in the import's own transaction and,
	// started, works it (work).
	queue *queue.Queue
	// slice is Slice (tests shorten it).
	slice time.Duration
}

// New makes the imports of store and registers their job with q, which
// works one import at a time per instance (one at a time per store
// anyway); logger may be nil.
func New(store *db.Store, q *queue.Queue, logger *slog.Logger) (*Imports, error) {
	im := &Imports{store: store, logger: cmp.Or(logger, slog.New(slog.DiscardHandler)), queue: q, slice: Slice}
	err := queue.Register(q, queue.Kind{Queue: JobQueue, Workers: 1, Timeout: JobTimeout, MaxAttempts: maxAttempts},
		func(ctx context.Context, job *river.Job[jobArgs]) error { return im.work(ctx, job.Args.ImportID) })
	if err != nil {
		return nil, fmt.Errorf("imports: %w", err)
	}
	return im, nil
}

// Create checks the file body while copying it to a local temporary file,
// then stores it and queues its import in one short transaction: no lock
// is held while a client sends (SPEC §18: an import never stops the shop).
// Nothing is stored when the file has a problem (validation_failed with
// the first 100) or another import is queued or running (import_running).
// ctx carries who started it (db.WithOrigin), for the audit entry.
func (im *Imports) Create(ctx context.Context, body io.Reader) (*db.Import, error) {
	if active, err := im.store.ActiveImport(ctx); err != nil {
		return nil, err
	} else if active != nil {
		return nil, db.Errorf(db.EImportRunning, "Import %d is %s; wait until it has finished.", active.ID, active.Status)
	}
	spool, err := os.CreateTemp("", "petstore-import-*.csv")
	if err != nil {
		return nil, fmt.Errorf("import spool: %w", err)
	}
	defer os.Remove(spool.Name())
	defer spool.Close()
	rows, err := petcsv.Read(io.TeeReader(body, spool), im.today(), nil)
	if err != nil {
		return nil, err
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("import spool: %w", err)
	}
	return im.store.CreateImport(ctx, bufio.NewReaderSize(spool, 1<<16), rows, im.enqueue)
}

// enqueue inserts the job of import id in tx.
func (im *Imports) enqueue(ctx context.Context, tx *sql.Tx, id int64) error {
	return im.queue.InsertTx(ctx, tx, jobArgs{ImportID: id})
}

// Find is an import with its progress (the rows written so far: each
// batch moves it on in its own transaction). Errors: not_found.
func (im *Imports) Find(ctx context.Context, id int64) (*db.Import, error) {
	return im.store.FindImportByID(ctx, id)
}

func (im *Imports) today() time.Time { return im.store.Now().UTC().Truncate(24 * time.Hour) }

// Run runs import id to its end, a slice after another (step): the job
// runs one slice an attempt; tests and tools run it whole.
func (im *Imports) Run(ctx context.Context, id int64) error {
	for {
		more, err := im.step(ctx, id, 0)
		if err != nil || !more {
			return err
		}
	}
}

// work is the job: one slice of the import, then the job snoozed (River
// does not count a snooze as an attempt) to take the next slice at once.
func (im *Imports) work(ctx context.Context, id int64) error {
	more, err := im.step(ctx, id, im.slice)
	if err == nil && more {
		return river.JobSnooze(0)
	}
	return err
}

// step marks import id running and writes it (db.Store.RunImport) for
// about slice (0: to its end), resuming after the rows it wrote before;
// more reports that rows are left for the next step. It marks the import
// failed when writing fails, with user-safe problems, and returns an error
// only when the step should be tried again: it was cut off, or the
// database could not be reached to record the outcome.
func (im *Imports) step(ctx context.Context, id int64, slice time.Duration) (more bool, err error) {
	i, ok, err := im.store.StartImport(ctx, id)
	if err != nil || !ok {
		return false, err
	}
	today := im.today()
	parse := func(r io.Reader, emit func(*db.CatalogRow) error) error {
		_, err := petcsv.Read(r, today, emit)
		return err
	}
	var pause <-chan time.Time // a slice of the job's attempt, then it snoozes
	if slice > 0 {
		t := time.NewTimer(slice)
		defer t.Stop()
		pause = t.C
	}
	finished, err := im.store.RunImport(ctx, i, parse, nil, pause)
	switch {
	case err == nil && !finished:
		return true, nil
	case err == nil:
		im.logger.Info("catalog import finished", "import", id)
		return false, nil
	case ctx.Err() != nil, db.IsUnavailable(err):
		// Cut off, or the database away: River runs it again (with backoff),
		// from the rows written.
		return false, err
	}
	var problems []db.FieldError
	var coded *db.Error
	if errors.As(err, &coded) && coded.Code == db.EValidationFailed {
		problems = coded.Details
	} else {
		im.logger.Error("catalog import failed", "import", id, "err", err)
		problems = []db.FieldError{{Field: "import", Message: "The catalog could not be written; nothing was imported. Try again, or ask the store's operator to look at the server's log."}}
	}
	if err := im.store.FailImport(context.WithoutCancel(ctx), id, problems); err != nil {
		return false, err
	}
	return false, nil
}
