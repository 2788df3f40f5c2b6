// Package imports runs the catalog imports of SPEC §18: an uploaded file
// is checked and stored while it arrives (Create), then a River job writes
// it to the catalog in one transaction (Run), reporting its progress.
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
	"sync"
	"sync/atomic"
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
	// JobTimeout bounds one run of an import: a million rows take minutes.
	// A job running longer (its instance died) is made available again
	// (web/queue's rescue), to run from the start (its transaction never
	// committed).
	JobTimeout = 30 * time.Minute
	// maxAttempts: a run cut off (a crash, a shutdown, the database away)
	// is tried again; an import whose file fails is marked failed at once.
	maxAttempts = 5
	// progressEvery is how often a running import's progress is written to
	// its row on PostgreSQL, for GET on other instances.
	progressEvery = time.Second
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
	// started, works it (Run).
	queue *queue.Queue
	// running is the progress of the imports this instance runs, by id: on
	// SQLite the import holds the only write lock, so progress lives here.
	running sync.Map // int64 → *atomic.Int64
}

// New makes the imports of store and registers their job with q, which
// works one import at a time per instance (one at a time per store
// anyway); logger may be nil.
func New(store *db.Store, q *queue.Queue, logger *slog.Logger) (*Imports, error) {
	im := &Imports{store: store, logger: cmp.Or(logger, slog.New(slog.DiscardHandler)), queue: q}
	err := queue.Register(q, queue.Kind{Queue: JobQueue, Workers: 1, Timeout: JobTimeout, MaxAttempts: maxAttempts},
		func(ctx context.Context, job *river.Job[jobArgs]) error { return im.Run(ctx, job.Args.ImportID) })
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

// Find is an import with its progress: the rows written so far by a run
// of this instance, else as last written to its row. Errors: not_found.
func (im *Imports) Find(ctx context.Context, id int64) (*db.Import, error) {
	i, err := im.store.FindImportByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if n, ok := im.running.Load(id); ok && i.Status == db.ImportRunning {
		i.Processed = max(i.Processed, n.(*atomic.Int64).Load())
	}
	return i, nil
}

func (im *Imports) today() time.Time { return im.store.Now().UTC().Truncate(24 * time.Hour) }

// Run runs import id: marks it running, writes it (db.Store.RunImport) and
// marks it failed when that fails, with user-safe problems. It returns an
// error only when the run should be tried again: it was cut off, or the
// database could not be reached to record the outcome.
func (im *Imports) Run(ctx context.Context, id int64) error {
	i, ok, err := im.store.StartImport(ctx, id)
	if err != nil || !ok {
		return err
	}
	progress := &atomic.Int64{}
	im.running.Store(id, progress)
	defer im.running.Delete(id)
	stop := im.writeProgress(ctx, id, progress)
	today := im.today()
	parse := func(r io.Reader, emit func(*db.CatalogRow) error) error {
		_, err := petcsv.Read(r, today, emit)
		return err
	}
	err = im.store.RunImport(ctx, i, parse, progress.Store)
	stop()
	switch {
	case err == nil:
		im.logger.Info("catalog import succeeded", "import", id, "rows", progress.Load())
		return nil
	case ctx.Err() != nil:
		return err // cut off: River runs it again
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
		return err
	}
	return nil
}

// writeProgress writes progress to the import's row every progressEvery
// on PostgreSQL, from a connection beside the import's transaction, until
// the returned stop. SQLite has one writer, the import: its progress stays
// in memory (Find).
func (im *Imports) writeProgress(ctx context.Context, id int64, progress *atomic.Int64) (stop func()) {
	if im.store.Dialect() != db.DialectPostgres {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		var written int64
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if n := progress.Load(); n != written {
				if err := im.store.SetImportProgress(ctx, id, n); err == nil {
					written = n
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}
