package db

import (
	"slices"
	"strconv"
	"strings"
)

// list is a paged list query of rows filtered by status, built so that
// every filter walks an index in the list's order and stops after a page.
type list struct {
	// from is "SELECT cols FROM tables"; conds adds the filter's conditions
	// other than status.
	from  string
	conds func(w *where)
	// key is the keyset column in from's terms, out its name in the output.
	key, out string
	// status is the column statuses filter on.
	status string
}

// build returns the query and its arguments for the rows of page whose
// status is one of statuses (any status when empty). One status is an
// equality the (status, id) indexes serve in id order. Several statuses
// become one such walk each, a page long, merged by id: an IN list would
// make the engine read every row of those statuses and sort them.
func (l list) build(statuses []string, page Page) (string, []any) {
	statuses = slices.Compact(slices.Sorted(slices.Values(statuses)))
	if len(statuses) <= 1 {
		var w where
		return l.branch(&w, statuses, page), w.args
	}
	var args []any
	parts := make([]string, len(statuses))
	for i, st := range statuses {
		w := where{args: args}
		parts[i] = "SELECT * FROM (" + l.branch(&w, []string{st}, page) + ") AS s" + strconv.Itoa(i)
		args = w.args
	}
	return strings.Join(parts, " UNION ALL ") + " ORDER BY " + l.out + " LIMIT " + strconv.Itoa(page.limit()+1), args
}

// branch is the query for at most one status.
func (l list) branch(w *where, statuses []string, page Page) string {
	if l.conds != nil {
		l.conds(w)
	}
	if len(statuses) == 1 {
		w.add(l.status + " = " + w.arg(statuses[0]))
	}
	tail := page.clause(w, l.key)
	return l.from + w.String() + tail
}

// listSelector returns how the query of a list with these filters runs. On
// PostgreSQL a list filtered by status or category runs unprepared,
// planned for its actual values: the generic plan of a cached statement
// guesses their selectivity, and guessed wrong it walks the primary key and
// filters (a status no pet has reads every pet). Planning each such query
// took 0.4-1.2 ms at a million pets on a busy machine. Pages without
// filters keep their cached statement, first or past a cursor
// (afterOnInventory keeps that plan good for any cursor).
func (s *Store) listSelector(valueDependent bool) selector {
	if valueDependent && s.dialect == DialectPostgres {
		return s.stmts.SelectOnce
	}
	return s.sel
}

// afterOnInventory repeats a pet list's cursor on inventory's key, which
// the join makes equal to the pet's id: PostgreSQL carries equalities
// across a join but not ranges, so without it the cached plan of a page
// past a cursor merge-joins inventory from its first row (at pet 7,000 of
// 10,000 it read 7,021 inventory rows for 21; with it, 21).
func afterOnInventory(w *where, p Page) {
	if p.AfterID > 0 {
		w.add("i.pet_id > " + w.arg(p.AfterID))
	}
}
