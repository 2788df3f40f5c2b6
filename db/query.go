package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// where builds a WHERE clause with $N placeholders, which both engines accept.
type where struct {
	conds []string
	args  []any
}

// arg binds v and returns its placeholder.
func (w *where) arg(v any) string {
	w.args = append(w.args, v)
	return "$" + strconv.Itoa(len(w.args))
}

// add appends a condition; use w.arg inside it for values.
func (w *where) add(cond string) { w.conds = append(w.conds, cond) }

// in returns "(p1, p2, ...)" binding every value.
func in[T any](w *where, vals []T) string {
	ps := make([]string, len(vals))
	for i, v := range vals {
		ps[i] = w.arg(v)
	}
	return "(" + strings.Join(ps, ", ") + ")"
}

func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// Page is the keyset window of a list: at most Limit rows following the
// row AfterID in the list's order. Lists go by id, oldest first; a list
// newest first (the console's orders) takes the rows below AfterID.
type Page struct {
	AfterID int64
	Limit   int
}

// DefaultLimit and MaxLimit bound list sizes (SPEC §2).
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

func (p Page) limit() int {
	if p.Limit <= 0 || p.Limit > MaxLimit {
		return DefaultLimit
	}
	return p.Limit
}

// clause adds the keyset condition on col and returns the ORDER BY/LIMIT
// tail. One extra row is fetched to learn whether another page exists.
func (p Page) clause(w *where, col string) string {
	if p.AfterID > 0 {
		w.add(col + " > " + w.arg(p.AfterID))
	}
	return " ORDER BY " + col + " LIMIT " + strconv.Itoa(p.limit()+1)
}

// newestFirst is clause for a list in descending col order: AfterID is
// the last id of the page before, so the rows that follow have smaller ids.
func (p Page) newestFirst(w *where, col string) string {
	if p.AfterID > 0 {
		w.add(col + " < " + w.arg(p.AfterID))
	}
	return " ORDER BY " + col + " DESC LIMIT " + strconv.Itoa(p.limit()+1)
}

// getter runs a query for one row: Store.get or Tx.get.
type getter func(ctx context.Context, dest any, query string, args ...any) error

// findOne reads the one row query selects into a new T. No row is
// notFound; any other failure is wrapped with what was being found.
func findOne[T any](ctx context.Context, g getter, what string, notFound error, query string, args ...any) (*T, error) {
	var v T
	err := g(ctx, &v, query, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound
	}
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", what, err)
	}
	scanned(&v)
	return &v, nil
}

// afterScanner is a row type that completes itself from its columns once
// scanned (Order builds its Customer).
type afterScanner interface{ afterScan() }

// scanned lets a scanned row complete itself.
func scanned(row any) {
	if a, ok := row.(afterScanner); ok {
		a.afterScan()
	}
}

// notFound is the not_found error of a resource by id: "Pet 7 not found."
func notFound(noun string, id int64) error {
	return Errorf(ENotFound, "%s %d not found.", noun, id)
}

// selectPage runs a list query whose tail is page's clause (one row past
// the page) and trims the rows to the page, reporting whether more follow.
func selectPage[T any](ctx context.Context, s *Store, what string, page Page, query string, args ...any) ([]T, bool, error) {
	return selectPageWith[T](ctx, s.sel, what, page, query, args...)
}

// selector runs a query for many rows: Store.sel, or the pool directly.
type selector func(ctx context.Context, dest any, query string, args ...any) error

// selectPageWith is selectPage through sel.
func selectPageWith[T any](ctx context.Context, sel selector, what string, page Page, query string, args ...any) ([]T, bool, error) {
	var rows []T
	if err := sel(ctx, &rows, query, args...); err != nil {
		return nil, false, fmt.Errorf("find %s: %w", what, err)
	}
	for i := range rows {
		scanned(any(rows[i]))
	}
	rows, more := trim(rows, page)
	return rows, more, nil
}

// trim cuts the extra row and reports whether there was one.
func trim[T any](rows []T, p Page) ([]T, bool) {
	if len(rows) > p.limit() {
		return rows[:p.limit()], true
	}
	return rows, false
}

// likePattern makes a case-folded "contains" LIKE pattern, escaping the
// LIKE wildcards in user input.
func likePattern(q string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(foldName(q)) + "%"
}
