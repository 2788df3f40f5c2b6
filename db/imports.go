package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Import statuses (SPEC §18).
const (
	ImportQueued    = "queued"
	ImportRunning   = "running"
	ImportSucceeded = "succeeded"
	ImportFailed    = "failed"
)

// EImportRunning refuses an import while another is queued or running
// (SPEC §18: one at a time per store).
const EImportRunning = "import_running"

// ImportChunkSize is how many bytes of an uploaded file one import_chunks
// row holds.
const ImportChunkSize = 1 << 20

// Import is a catalog import as the API shows it (GET /api/imports/{id}).
type Import struct {
	ID         int64        `db:"id" json:"id"`
	Status     string       `db:"status" json:"status"`
	Rows       int64        `db:"row_count" json:"rows"`
	Processed  int64        `db:"processed" json:"processed"`
	Errors     []FieldError `db:"-" json:"errors"`
	CreatedAt  time.Time    `db:"created_at" json:"createdAt"`
	FinishedAt *time.Time   `db:"finished_at" json:"finishedAt"`

	ErrorsJSON string `db:"errors" json:"-"`
	origin     importOrigin
}

// importOrigin is who started an import, kept for the audit entry the
// job writes on their behalf.
type importOrigin struct {
	ActorType string `db:"actor_type"`
	ActorID   string `db:"actor_id"`
	ActorName string `db:"actor_name"`
	RequestID string `db:"request_id"`
	IP        string `db:"ip"`
}

const importCols = `id, status, row_count, processed, errors, created_at, finished_at`

func errImportRunning() error {
	return Errorf(EImportRunning, "An import is already queued or running; wait until it has finished.")
}

// ActiveImport returns the import queued or running, nil when there is none.
func (s *Store) ActiveImport(ctx context.Context) (*Import, error) {
	var im Import
	err := s.get(ctx, &im, `SELECT `+importCols+` FROM imports WHERE status IN ('queued', 'running')`)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("active import: %w", err)
	}
	return im.decoded()
}

// FindImportByID returns an import. Errors: not_found.
func (s *Store) FindImportByID(ctx context.Context, id int64) (*Import, error) {
	im, err := findOne[Import](ctx, s.get, "import", notFound("Import", id), `SELECT `+importCols+` FROM imports WHERE id = $1`, id)
	if err != nil {
		return nil, err
	}
	return im.decoded()
}

// decoded fills Errors from the stored JSON.
func (im *Import) decoded() (*Import, error) {
	im.Errors = []FieldError{}
	if im.ErrorsJSON != "" {
		if err := json.Unmarshal([]byte(im.ErrorsJSON), &im.Errors); err != nil {
			return nil, fmt.Errorf("decode import errors: %w", err)
		}
	}
	if im.FinishedAt != nil {
		t := im.FinishedAt.UTC()
		im.FinishedAt = &t
	}
	im.CreatedAt = im.CreatedAt.UTC()
	return im, nil
}

// CreateImport stores a checked file of rows rows as a queued import, in
// one short transaction: the import row, the file's bytes in chunks read
// from file (a local copy the caller made while it checked the upload:
// never a client's connection, so a slow client holds no lock) and the
// import's job (enqueue, in the same transaction). The caller makes sure
// the origin of ctx is set (the audit entry is written by the job for it).
// Errors: import_running.
func (s *Store) CreateImport(ctx context.Context, file io.Reader, rows int64,
	enqueue func(ctx context.Context, tx *sql.Tx, importID int64) error) (*Import, error) {
	o, _ := OriginFrom(ctx)
	tx, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	im := &Import{Status: ImportQueued, Rows: rows, CreatedAt: tx.now, Errors: []FieldError{}}
	err = tx.get(ctx, &im.ID, `INSERT INTO imports (status, row_count, created_at, actor_type, actor_id, actor_name, request_id, ip)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		ImportQueued, rows, tx.now, o.Actor.Type, o.Actor.ID, o.Actor.Name, o.RequestID, o.IP)
	if isUniqueViolation(err) {
		return nil, errImportRunning()
	}
	if err != nil {
		return nil, fmt.Errorf("create import: %w", err)
	}
	buf := make([]byte, ImportChunkSize)
	for seq := 0; ; seq++ {
		n, err := io.ReadFull(file, buf)
		if n > 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO import_chunks (import_id, seq, data) VALUES ($1, $2, $3)`, im.ID, seq, buf[:n]); err != nil {
				return nil, fmt.Errorf("write import chunk: %w", err)
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read import file: %w", err)
		}
	}
	if err := enqueue(ctx, tx.Tx.Tx, im.ID); err != nil {
		return nil, fmt.Errorf("queue import: %w", err)
	}
	return im, tx.Commit()
}

// importData reads an import's file back from its chunks, one chunk at a
// time, in order.
type importData struct {
	ctx  context.Context
	s    *Store
	id   int64
	seq  int
	data []byte
	done bool
}

func (r *importData) Read(p []byte) (int, error) {
	for len(r.data) == 0 {
		if r.done {
			return 0, io.EOF
		}
		var data []byte
		err := r.s.db.QueryRowContext(r.ctx, `SELECT data FROM import_chunks WHERE import_id = $1 AND seq = $2`, r.id, r.seq).Scan(&data)
		if errors.Is(err, sql.ErrNoRows) {
			r.done = true
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("read import chunk: %w", err)
		}
		r.seq++
		r.data = data
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// StartImport marks a queued import running and returns it; an import
// running already (its job paused, or rescued after a crash) is returned
// as it is, to resume after the rows it wrote (Processed). ok is false when the import is finished (or
// gone): its job has nothing left to do.
func (s *Store) StartImport(ctx context.Context, id int64) (im *Import, ok bool, err error) {
	if _, err := s.exec(ctx, `UPDATE imports SET status = $1 WHERE id = $2 AND status IN ('queued', 'running')`,
		ImportRunning, id); err != nil {
		return nil, false, fmt.Errorf("start import: %w", err)
	}
	im = &Import{}
	err = s.get(ctx, im, `SELECT `+importCols+` FROM imports WHERE id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("start import: %w", err)
	}
	if err := s.get(ctx, &im.origin, `SELECT actor_type, actor_id, actor_name, request_id, ip FROM imports WHERE id = $1`, id); err != nil {
		return nil, false, fmt.Errorf("start import: %w", err)
	}
	if im.Status != ImportRunning {
		return im, false, nil
	}
	return im, true, nil
}

// FailImport marks an import that has not succeeded failed with problems
// (user-safe), drops its file and deletes the pets and categories it
// wrote, which nobody ever saw (RunImport), in short transactions.
func (s *Store) FailImport(ctx context.Context, id int64, problems []FieldError) error {
	b, err := json.Marshal(problems)
	if err != nil {
		return fmt.Errorf("fail import: %w", err)
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.exec(ctx, `UPDATE imports SET status = $1, errors = $2, finished_at = $3 WHERE id = $4 AND status <> $5`,
		ImportFailed, string(b), tx.now, id, ImportSucceeded); err != nil {
		return fmt.Errorf("fail import: %w", err)
	}
	if _, err := tx.exec(ctx, `DELETE FROM import_chunks WHERE import_id = $1`, id); err != nil {
		return fmt.Errorf("fail import: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return s.dropHiddenImport(ctx, id)
}
