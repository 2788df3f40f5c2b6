package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// AuditCatalogImport is the audit action of a catalog import (SPEC §18):
// one entry per import, its target the import.
const AuditCatalogImport = "catalog.import"

const auditTargetImport = "import"

// importBatch is how many pets one INSERT writes: 9 parameters a pet
// stays far below SQLite's 32,766 and PostgreSQL's 65,535 parameters.
const importBatch = 1000

// ImportParser reads an import's file from r and hands each row, validated,
// to emit, in order; it returns the file's problems as validation_failed.
type ImportParser func(r io.Reader, emit func(*CatalogRow) error) error

// RunImport writes a running import (StartImport) to the catalog in ONE
// transaction: its file is read back chunk by chunk and parsed again by
// parse; categories are found by name (case-insensitively, as the store
// compares names) or created; pets and their inventory are inserted
// importBatch at a time (marked with the import's id); one catalog.imported
// event (SPEC §18: not one pet.created per pet); one audit entry
// (catalog.import) for whoever started it; the import succeeded and its
// chunks deleted. progress, when set, is told the rows written so far
// after each batch. Nothing is written when any of it fails: the error is
// returned (validation_failed for a file that is no longer valid) and the
// caller marks the import failed (FailImport).
func (s *Store) RunImport(ctx context.Context, im *Import, parse ImportParser, progress func(int64)) error {
	if im.origin.ActorType != "" {
		ctx = WithOrigin(ctx, Origin{
			Actor:     Actor{Type: im.origin.ActorType, ID: im.origin.ActorID, Name: im.origin.ActorName},
			RequestID: im.origin.RequestID, IP: im.origin.IP,
		})
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if done, err := tx.claimImport(ctx, im.ID); err != nil || done {
		return err
	}
	w := &importWriter{tx: tx, importID: im.ID, categories: map[string]int64{}, progress: progress, fault: s.importFault}
	err = parse(&importData{ctx: ctx, s: s, id: im.ID}, func(r *CatalogRow) error {
		w.batch = append(w.batch, r)
		if len(w.batch) == importBatch {
			return w.flush(ctx)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := w.flush(ctx); err != nil {
		return err
	}
	changes := Changes{}
	changes.Set("rows", nil, w.written)
	changes.Set("categoriesCreated", nil, w.created)
	if err := tx.audit(AuditCatalogImport, TargetID(auditTargetImport, im.ID), changes); err != nil {
		return err
	}
	// One event for the whole import (SPEC §18), not one per pet.
	if err := tx.addEvent(ctx, EventCatalogImported, CatalogImported{ImportID: im.ID, Rows: w.written, CategoriesCreated: w.created}); err != nil {
		return err
	}
	// finished_at is when the writing ended, not when the transaction began.
	if _, err := tx.exec(ctx, `UPDATE imports SET status = $1, processed = $2, row_count = $2, finished_at = $3 WHERE id = $4`,
		ImportSucceeded, w.written, s.Now().UTC(), im.ID); err != nil {
		return fmt.Errorf("finish import: %w", err)
	}
	if _, err := tx.exec(ctx, `DELETE FROM import_chunks WHERE import_id = $1`, im.ID); err != nil {
		return fmt.Errorf("finish import: %w", err)
	}
	return tx.Commit()
}

// importLockSpace ("IMPT") is the first key of the PostgreSQL advisory
// lock an import's writing transaction holds (the import's id the second).
const importLockSpace = 0x494d5054

// claimImport makes tx the one run writing import id: a second run of the
// same import (its job run again while the first still wrote: a rescue
// after the job's timeout, a retry racing a slow commit) waits for the
// first and then finds the import finished (done), so a file is never
// written twice. On PostgreSQL the wait is an advisory lock, not a lock of
// the import's row, which the progress writer updates meanwhile; on SQLite
// the transaction is the only writer already.
func (tx *Tx) claimImport(ctx context.Context, id int64) (done bool, err error) {
	if tx.dialect() == DialectPostgres {
		if _, err := tx.exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, importLockSpace, strconv.FormatInt(id, 10)); err != nil {
			return false, fmt.Errorf("claim import: %w", err)
		}
	}
	var status string
	if err := tx.get(ctx, &status, `SELECT status FROM imports WHERE id = $1`, id); err != nil {
		return false, fmt.Errorf("claim import: %w", err)
	}
	return status != ImportRunning, nil
}

// valueRows is the VALUES list of a multi-row INSERT of rows rows of cols
// parameters, numbered in order. SQLite gets anonymous "?": it looks a
// "$N" up by name in a list, per parameter, which makes a statement of
// thousands of parameters cost their square.
func (tx *Tx) valueRows(rows, cols int) string {
	var b strings.Builder
	n := 0
	for r := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := range cols {
			if c > 0 {
				b.WriteString(", ")
			}
			n++
			if tx.dialect() == DialectSQLite {
				b.WriteByte('?')
			} else {
				b.WriteString("$" + strconv.Itoa(n))
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// importWriter writes an import's rows in batches within its transaction.
type importWriter struct {
	tx         *Tx
	importID   int64
	categories map[string]int64 // folded name → id
	batch      []*CatalogRow
	written    int64
	created    int64
	progress   func(int64)
	fault      func(written int64) error
}

// category is the id of the live category named name, created when there
// is none.
func (w *importWriter) category(ctx context.Context, name string) (int64, error) {
	key := foldName(name)
	if id, ok := w.categories[key]; ok {
		return id, nil
	}
	var id int64
	err := w.tx.get(ctx, &id, `SELECT id FROM categories WHERE name_key = $1 AND deleted_at IS NULL`, key)
	if errors.Is(err, sql.ErrNoRows) {
		var c *Category
		if c, err = w.tx.insertCategory(ctx, NewCategory{Name: &name}); err == nil {
			id = c.ID
			w.created++
		}
	}
	if err != nil {
		return 0, fmt.Errorf("import category: %w", err)
	}
	w.categories[key] = id
	return id, nil
}

// flush writes the batch: the pets in one INSERT, their inventory in
// another.
func (w *importWriter) flush(ctx context.Context) error {
	if len(w.batch) == 0 {
		return nil
	}
	tx := w.tx
	pets := make([]*Pet, len(w.batch))
	for i, r := range w.batch {
		cat, err := w.category(ctx, r.CategoryName())
		if err != nil {
			return err
		}
		p := r.newPet(cat)
		p.Status = deriveStatus(p.Stock, 0)
		p.Currency = tx.store.Currency
		p.Photos = Photos{}
		pets[i] = p
	}
	args := make([]any, 0, 11*len(pets))
	for _, p := range pets {
		args = append(args, p.Name, foldName(p.Name), p.CategoryID, p.Status, p.Price, p.Description, p.Breed, p.BirthDate, tx.now, tx.now, w.importID)
	}
	var ids []int64
	err := tx.SelectContext(ctx, &ids, `INSERT INTO pets (name, name_key, category_id, status, price, description, breed, birth_date,
		created_at, updated_at, import_id) VALUES `+tx.valueRows(len(pets), 11)+` RETURNING id`, args...)
	if err != nil {
		return fmt.Errorf("import pets: %w", err)
	}
	if len(ids) != len(pets) {
		return fmt.Errorf("import pets: %d ids for %d pets", len(ids), len(pets))
	}
	// One statement draws its ids in the order of its rows; RETURNING need
	// not list them in that order.
	slices.Sort(ids)
	args = args[:0]
	for i, p := range pets {
		p.ID = ids[i]
		args = append(args, p.ID, p.Stock, tx.now)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO inventory (pet_id, quantity, updated_at) VALUES `+tx.valueRows(len(pets), 3), args...); err != nil {
		return fmt.Errorf("import inventory: %w", err)
	}
	w.written += int64(len(pets))
	w.batch = w.batch[:0]
	if w.fault != nil {
		if err := w.fault(w.written); err != nil {
			return err
		}
	}
	if w.progress != nil {
		w.progress(w.written)
	}
	return nil
}
