package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/lib/pq"
)

// Category groups pets.
type Category struct {
	ID          int64   `db:"id" json:"id"`
	Name        string  `db:"name" json:"name"`
	Description *string `db:"description" json:"description,omitempty"`
}

// NewCategory is the input shape of a category (POST and PUT).
type NewCategory struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// Validate trims and checks the fields (SPEC §2).
func (c *NewCategory) Validate() error {
	var p Problems
	checkName(&p, "name", c.Name)
	if c.Description != nil {
		checkDescription(&p, "description", *c.Description, MaxDescriptionLen)
	}
	return p.Err()
}

const categoryCols = `id, name, description`

// FindCategories lists live categories by id and reports whether more follow.
func (s *Store) FindCategories(ctx context.Context, page Page) ([]*Category, bool, error) {
	var w where
	w.add("deleted_at IS NULL")
	tail := page.clause(&w, "id")
	return selectPage[*Category](ctx, s, "categories", page, `SELECT `+categoryCols+` FROM categories`+w.String()+tail, w.args...)
}

// FindCategoryByID returns a live category. Errors: not_found.
func (s *Store) FindCategoryByID(ctx context.Context, id int64) (*Category, error) {
	return findOne[Category](ctx, s.get, "category", notFound("Category", id),
		`SELECT `+categoryCols+` FROM categories WHERE id = $1 AND deleted_at IS NULL`, id)
}

// CreateCategory adds a category. Errors: validation_failed, category_exists.
func (s *Store) CreateCategory(ctx context.Context, in NewCategory) (*Category, error) {
	return s.saveCategory(ctx, 0, in)
}

// UpdateCategory replaces a category's fields. Errors: validation_failed,
// not_found, category_exists.
func (s *Store) UpdateCategory(ctx context.Context, id int64, in NewCategory) (*Category, error) {
	return s.saveCategory(ctx, id, in)
}

// saveCategory adds a category (id 0) or replaces category id, after
// checking that no other live category has the name.
func (s *Store) saveCategory(ctx context.Context, id int64, in NewCategory) (*Category, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	return inTx(ctx, s, func(tx *Tx) (*Category, error) {
		if err := tx.checkCategoryName(ctx, *in.Name, id); err != nil {
			return nil, err
		}
		var c *Category
		var before fields
		var err error
		action := AuditCategoryCreate
		if id == 0 {
			c, err = tx.insertCategory(ctx, in)
		} else {
			action = AuditCategoryUpdate
			if before, err = tx.categoryFields(ctx, id); err == nil {
				c, err = tx.updateCategory(ctx, id, in)
			}
		}
		if err != nil {
			return nil, err
		}
		if err := tx.audit(action, TargetID(auditTargetCategory, c.ID), diff(before, c.auditFields())); err != nil {
			return nil, err
		}
		return c, nil
	})
}

// categoryFields reads a live category's audited fields before a change
// (none when it does not exist: the change reports not_found).
func (tx *Tx) categoryFields(ctx context.Context, id int64) (fields, error) {
	if !audited(tx.ctx) {
		return nil, nil
	}
	var c Category
	err := tx.get(ctx, &c, `SELECT `+categoryCols+` FROM categories WHERE id = $1 AND deleted_at IS NULL`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find category: %w", err)
	}
	return c.auditFields(), nil
}

// insertCategory writes a validated category. Errors: category_exists.
func (tx *Tx) insertCategory(ctx context.Context, in NewCategory) (*Category, error) {
	var c Category
	err := tx.get(ctx, &c, `INSERT INTO categories (name, name_key, description, created_at)
		VALUES ($1, $2, $3, $4) RETURNING `+categoryCols, *in.Name, foldName(*in.Name), in.Description, tx.now)
	if isUniqueViolation(err) {
		return nil, errCategoryExists(*in.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("create category: %w", err)
	}
	return &c, nil
}

// updateCategory writes a validated category over a live one.
// Errors: not_found, category_exists.
func (tx *Tx) updateCategory(ctx context.Context, id int64, in NewCategory) (*Category, error) {
	var c Category
	err := tx.get(ctx, &c, `UPDATE categories SET name = $1, name_key = $2, description = $3
		WHERE id = $4 AND deleted_at IS NULL RETURNING `+categoryCols, *in.Name, foldName(*in.Name), in.Description, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("Category", id)
	}
	if isUniqueViolation(err) {
		return nil, errCategoryExists(*in.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("update category: %w", err)
	}
	return &c, nil
}

// DeleteCategory removes a category that no live pet uses. It is kept in
// the database (soft delete) because deleted pets still refer to it.
// Errors: not_found, category_in_use.
func (s *Store) DeleteCategory(ctx context.Context, id int64) error {
	return inTxDo(ctx, s, func(tx *Tx) error {
		var pets int
		if err := tx.get(ctx, &pets, `SELECT count(*) FROM pets WHERE category_id = $1 AND deleted_at IS NULL`, id); err != nil {
			return fmt.Errorf("count pets: %w", err)
		}
		before, err := tx.categoryFields(ctx, id)
		if err != nil {
			return err
		}
		res, err := tx.exec(ctx, `UPDATE categories SET deleted_at = $1 WHERE id = $2 AND deleted_at IS NULL`, tx.now, id)
		if err != nil {
			return fmt.Errorf("delete category: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("Category", id)
		}
		if pets > 0 {
			return Errorf(ECategoryInUse, "Category %d still has %d pets.", id, pets)
		}
		if err := tx.audit(AuditCategoryDelete, TargetID(auditTargetCategory, id), diff(before, nil)); err != nil {
			return err
		}
		return nil
	})
}

// checkCategoryName fails with category_exists when another live category
// has the same name, compared case-insensitively.
func (tx *Tx) checkCategoryName(ctx context.Context, name string, exceptID int64) error {
	var n int
	err := tx.get(ctx, &n, `SELECT count(*) FROM categories WHERE name_key = $1 AND id <> $2 AND deleted_at IS NULL`,
		foldName(name), exceptID)
	if err != nil {
		return fmt.Errorf("check category name: %w", err)
	}
	if n > 0 {
		return errCategoryExists(name)
	}
	return nil
}

func errCategoryExists(name string) error {
	return Errorf(ECategoryExists, "A category named %q already exists.", name)
}

// isUniqueViolation recognises the unique index on live category names
// refusing a write. On PostgreSQL two transactions can both pass
// checkCategoryName before either commits; the index then stops the
// second, which is the same conflict the check reports.
func isUniqueViolation(err error) bool {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		return pqErr.Code == "23505"
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// checkCategory fails with validation_failed on categoryId when the
// category does not exist or is deleted (SPEC §13).
func (tx *Tx) checkCategory(ctx context.Context, id int64) error {
	var n int
	if err := tx.get(ctx, &n, `SELECT count(*) FROM categories WHERE id = $1 AND deleted_at IS NULL`, id); err != nil {
		return fmt.Errorf("check category: %w", err)
	}
	if n == 0 {
		return Invalid("categoryId", "category %d does not exist", id)
	}
	return nil
}

// CountPetsByCategory counts the live pets of every category that has any.
// It reads pet_counts, kept by triggers (migration 00005): its cost grows
// with the categories, not with the pets.
func (s *Store) CountPetsByCategory(ctx context.Context) (map[int64]int, error) {
	var rows []struct {
		CategoryID int64 `db:"category_id"`
		N          int   `db:"n"`
	}
	if err := s.sel(ctx, &rows, `SELECT category_id, CAST(SUM(n) AS BIGINT) AS n FROM pet_counts
		GROUP BY category_id HAVING SUM(n) > 0`); err != nil {
		return nil, fmt.Errorf("count pets by category: %w", err)
	}
	m := make(map[int64]int, len(rows))
	for _, r := range rows {
		m[r.CategoryID] = r.N
	}
	return m, nil
}
