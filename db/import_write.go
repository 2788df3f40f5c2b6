package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AuditCatalogImport is the audit action of a catalog import (SPEC §18):
// one entry per import, its target the import.
const AuditCatalogImport = "catalog.import"

const auditTargetImport = "import"

// importBatch is how many pets one INSERT (and one transaction of an
// import) writes: 12 parameters a pet stays far below SQLite's 32,766 and PostgreSQL's 65,535 parameters.
const importBatch = 1000

// ImportParser reads an import's file from r and hands each row, validated,
// to emit, in order; it returns the file's problems as validation_failed.
type ImportParser func(r io.Reader, emit func(*CatalogRow) error) error

// errImportPaused stops the parse of a run whose time is up (RunImport).
var errImportPaused = errors.New("import paused")

// errImportTaken stops a run whose import moved on without it: another
// run wrote its next batch, or it was failed or cancelled.
var errImportTaken = errors.New("import taken over or finished elsewhere")

// RunImport writes a running import (StartImport) to the catalog in short
// transactions, so it never holds SQLite's one writer for long (SPEC §18:
// an import never stops the shop). Its file is read back chunk by chunk
// and parsed again by parse; the rows the import wrote before (Processed:
// a run cut off, or paused) are checked again and skipped. Each batch of
// importBatch rows is one transaction: categories found by name (live,
// compared without letter case, or made by this import) or created, the
// pets (marked with the import's id) and their inventory, all of them
// hidden (deleted_at set: no reader, counter or search shows them), and
// the import's processed count, moved on only from the count this run
// read (a second run of the same import stops at its next batch). Once
// every row is written, one transaction shows them all at once
// (publishImport).
//
// The run stops after the first batch once pause is closed or fires (nil:
// never; the caller's timer: the store reads no clock but its own) and
// reports finished false: its caller runs it again to resume. An error
// is returned when a batch failed (validation_failed for a file that is
// no longer valid): the caller marks the import failed (FailImport),
// which deletes what it wrote. A run that finds its import no longer its
// own returns finished true and no error.
func (s *Store) RunImport(ctx context.Context, im *Import, parse ImportParser, progress func(int64), pause <-chan time.Time) (finished bool, err error) {
	if im.origin.ActorType != "" {
		ctx = WithOrigin(ctx, Origin{
			Actor:     Actor{Type: im.origin.ActorType, ID: im.origin.ActorID, Name: im.origin.ActorName},
			RequestID: im.origin.RequestID, IP: im.origin.IP,
		})
	}
	skip := im.Processed
	w := &importWriter{store: s, importID: im.ID, categories: map[string]int64{}, written: skip, progress: progress, fault: s.importFault}
	var seen int64
	err = parse(&importData{ctx: ctx, s: s, id: im.ID}, func(r *CatalogRow) error {
		if seen++; seen <= skip {
			return nil
		}
		w.batch = append(w.batch, r)
		if len(w.batch) < importBatch {
			return nil
		}
		if err := w.flush(ctx); err != nil {
			return err
		}
		select {
		case <-pause:
			return errImportPaused
		default:
			return nil
		}
	})
	if err == nil {
		err = w.flush(ctx)
	}
	if err == nil && seen < skip {
		err = fmt.Errorf("import %d: its file has %d rows, %d were written", im.ID, seen, skip)
	}
	if err == nil {
		err = s.publishImport(ctx, im.ID, w.written)
	}
	switch {
	case errors.Is(err, errImportPaused):
		return false, nil
	case errors.Is(err, errImportTaken):
		return true, nil
	}
	return err == nil, err
}

// publishImport shows a fully written import at once, in one transaction:
// its hidden categories and pets become live (a live category of the same
// name made meanwhile takes the import's pets instead of its own), one
// audit entry (catalog.import) for whoever started it, one
// catalog.imported event, and the import succeeded, its chunks deleted.
// The counters (pet_counts) and the catalog's change counter follow from
// the triggers.
func (s *Store) publishImport(ctx context.Context, id, written int64) error {
	return inTxDo(ctx, s, func(tx *Tx) error {
		var processed int64
		err := tx.get(ctx, &processed, `SELECT processed FROM imports WHERE id = $1 AND status = $2`, id, ImportRunning)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && processed != written) {
			return errImportTaken
		}
		if err != nil {
			return fmt.Errorf("publish import: %w", err)
		}
		var hidden []struct {
			ID      int64  `db:"id"`
			NameKey string `db:"name_key"`
		}
		if err := tx.SelectContext(ctx, &hidden, `SELECT id, name_key FROM categories WHERE import_id = $1 AND deleted_at IS NOT NULL`, id); err != nil {
			return fmt.Errorf("publish import: %w", err)
		}
		var created int64
		for _, c := range hidden {
			var live int64
			err := tx.get(ctx, &live, `SELECT id FROM categories WHERE name_key = $1 AND deleted_at IS NULL`, c.NameKey)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				_, err = tx.exec(ctx, `UPDATE categories SET deleted_at = NULL WHERE id = $1`, c.ID)
				created++
			case err == nil:
				if _, err = tx.exec(ctx, `UPDATE pets SET category_id = $1 WHERE import_id = $2 AND category_id = $3`, live, id, c.ID); err == nil {
					_, err = tx.exec(ctx, `DELETE FROM categories WHERE id = $1`, c.ID)
				}
			}
			if err != nil {
				return fmt.Errorf("publish import category: %w", err)
			}
		}
		if _, err := tx.exec(ctx, `UPDATE pets SET deleted_at = NULL, updated_at = $1 WHERE import_id = $2 AND deleted_at IS NOT NULL`, tx.now, id); err != nil {
			return fmt.Errorf("publish import pets: %w", err)
		}
		if tx.dialect() == DialectSQLite {
			// SQLite's per-row triggers skip this change (migration 00019):
			// the import's pets are counted here, once, grouped.
			if _, err := tx.exec(ctx, `INSERT INTO pet_counts (category_id, status, n)
				SELECT category_id, status, count(*) FROM pets WHERE import_id = $1 AND deleted_at IS NULL GROUP BY category_id, status
				ON CONFLICT (category_id, status) DO UPDATE SET n = n + excluded.n`, id); err != nil {
				return fmt.Errorf("publish import counts: %w", err)
			}
			if _, err := tx.exec(ctx, `UPDATE catalog_changes SET version = version + 1`); err != nil {
				return fmt.Errorf("publish import counts: %w", err)
			}
		}
		changes := Changes{}
		changes.Set("rows", nil, written)
		changes.Set("categoriesCreated", nil, created)
		if err := tx.audit(AuditCatalogImport, TargetID(auditTargetImport, id), changes); err != nil {
			return err
		}
		// One event for the whole import (SPEC §18), not one per pet.
		if err := tx.addEvent(ctx, EventCatalogImported, CatalogImported{ImportID: id, Rows: written, CategoriesCreated: created}); err != nil {
			return err
		}
		// finished_at is when the writing ended, not when the import began.
		if _, err := tx.exec(ctx, `UPDATE imports SET status = $1, row_count = $2, finished_at = $3 WHERE id = $4`,
			ImportSucceeded, written, s.Now().UTC(), id); err != nil {
			return fmt.Errorf("finish import: %w", err)
		}
		if _, err := tx.exec(ctx, `DELETE FROM import_chunks WHERE import_id = $1`, id); err != nil {
			return fmt.Errorf("finish import: %w", err)
		}
		return nil
	})
}

// dropHiddenImport deletes what an import that did not succeed wrote,
// importBatch pets a transaction (none was ever visible), then the
// categories it made.
func (s *Store) dropHiddenImport(ctx context.Context, id int64) error {
	for {
		n, err := inTx(ctx, s, func(tx *Tx) (int, error) {
			var ids []int64
			if err := tx.SelectContext(ctx, &ids, `SELECT id FROM pets WHERE import_id = $1 AND deleted_at IS NOT NULL ORDER BY id LIMIT `+
				strconv.Itoa(importBatch), id); err != nil || len(ids) == 0 {
				return 0, err
			}
			w := &where{}
			list := in(w, ids)
			if _, err := tx.ExecContext(ctx, `DELETE FROM inventory WHERE pet_id IN `+list, w.args...); err != nil {
				return 0, err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM pets WHERE id IN `+list, w.args...); err != nil {
				return 0, err
			}
			return len(ids), nil
		})
		if err != nil {
			return fmt.Errorf("drop failed import: %w", err)
		}
		if n == 0 {
			break
		}
	}
	if _, err := s.exec(ctx, `DELETE FROM categories WHERE import_id = $1 AND deleted_at IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM pets p WHERE p.category_id = categories.id)`, id); err != nil {
		return fmt.Errorf("drop failed import: %w", err)
	}
	return nil
}

// valueRows is the VALUES list of a multi-row INSERT of rows rows of cols
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

// importWriter writes an import's rows, a batch a transaction.
type importWriter struct {
	store      *Store
	importID   int64
	categories map[string]int64 // folded name → id, of committed batches
	batch      []*CatalogRow
	written    int64 // rows committed: the import's processed count
	progress   func(int64)
	fault      func(written int64) error
}

// category is the id of the live category named name, or of the hidden
// one this import made, created (hidden) when there is none; made holds
// the ones the batch's transaction found, kept once it commits.
func (w *importWriter) category(ctx context.Context, tx *Tx, name string, made map[string]int64) (int64, error) {
	key := foldName(name)
	if id, ok := w.categories[key]; ok {
		return id, nil
	}
	if id, ok := made[key]; ok {
		return id, nil
	}
	var id int64
	err := tx.get(ctx, &id, `SELECT id FROM categories WHERE name_key = $1
		AND (deleted_at IS NULL OR import_id = $2) ORDER BY CASE WHEN deleted_at IS NULL THEN 0 ELSE 1 END LIMIT 1`, key, w.importID)
	if errors.Is(err, sql.ErrNoRows) {
		err = tx.get(ctx, &id, `INSERT INTO categories (name, name_key, created_at, deleted_at, import_id)
			VALUES ($1, $2, $3, $3, $4) RETURNING id`, name, key, tx.now, w.importID)
	}
	if err != nil {
		return 0, fmt.Errorf("import category: %w", err)
	}
	made[key] = id
	return id, nil
}

// flush writes the batch in a transaction of its own: the import's count
// moved on (only from the count this run knows, else errImportTaken), its
// categories, its pets in one INSERT and their inventory in another, all
// hidden until the import is published.
func (w *importWriter) flush(ctx context.Context) error {
	if len(w.batch) == 0 {
		return nil
	}
	var made map[string]int64
	n := int64(len(w.batch))
	err := inTxDo(ctx, w.store, func(tx *Tx) error {
		made = map[string]int64{}
		res, err := tx.exec(ctx, `UPDATE imports SET processed = $1 WHERE id = $2 AND status = $3 AND processed = $4`,
			w.written+n, w.importID, ImportRunning, w.written)
		if err != nil {
			return fmt.Errorf("import progress: %w", err)
		}
		if k, err := res.RowsAffected(); err != nil || k != 1 {
			return errImportTaken
		}
		pets := make([]*Pet, len(w.batch))
		for i, r := range w.batch {
			cat, err := w.category(ctx, tx, r.CategoryName(), made)
			if err != nil {
				return err
			}
			p := r.newPet(cat)
			p.Status = deriveStatus(p.Stock, 0)
			pets[i] = p
		}
		args := make([]any, 0, 12*len(pets))
		for _, p := range pets {
			args = append(args, p.Name, foldName(p.Name), p.CategoryID, p.Status, p.Price, p.Description, p.Breed, p.BirthDate,
				tx.now, tx.now, tx.now, w.importID)
		}
		var ids []int64
		err = tx.SelectContext(ctx, &ids, `INSERT INTO pets (name, name_key, category_id, status, price, description, breed, birth_date,
			created_at, updated_at, deleted_at, import_id) VALUES `+tx.valueRows(len(pets), 12)+` RETURNING id`, args...)
		if err != nil {
			return fmt.Errorf("import pets: %w", err)
		}
		if len(ids) != len(pets) {
			return fmt.Errorf("import pets: %d ids for %d pets", len(ids), len(pets))
		}
		// One statement draws its ids in the order of its rows; RETURNING
		// need not list them in that order.
		slices.Sort(ids)
		args = args[:0]
		for i, p := range pets {
			args = append(args, ids[i], p.Stock, tx.now)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO inventory (pet_id, quantity, updated_at) VALUES `+tx.valueRows(len(pets), 3), args...); err != nil {
			return fmt.Errorf("import inventory: %w", err)
		}
		if w.fault != nil {
			return w.fault(w.written + n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	maps.Copy(w.categories, made)
	w.written += n
	w.batch = w.batch[:0]
	if w.progress != nil {
		w.progress(w.written)
	}
	return nil
}
