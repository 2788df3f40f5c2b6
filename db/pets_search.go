package db

import (
	"strings"
	"unicode/utf8"
)

// minTrigramQuery is the shortest search, in characters of its folded
// form, the trigram indexes can serve: a shorter one holds no trigram.
const minTrigramQuery = 3

// nameSearch is how a pet list finds "name contains q".
type nameSearch struct {
	// from replaces petFrom, key the list's keyset column, when the search
	// reads an index of its own first.
	from, key string
	conds     func(w *where)
	// unprepared runs the query as a one-off statement, planned for its
	// actual pattern (see Store.nameSearch).
	unprepared bool
}

// nameSearch returns the search for q, nil for no search. Every variant
// keeps the case-folded LIKE on name_key the catalog has always searched
// by, so the results are the plain scan's; the index only narrows the
// rows it checks:
//
//   - SQLite, q of three characters or more: the FTS5 trigram table
//     pets_fts, read in rowid (pet id) order, so the page stops after
//     limit+1 matches even when most pets match.
//   - PostgreSQL, the same: the pg_trgm GIN index on name_key. The planner
//     picks it for a rare pattern and the id-ordered walk for a common one,
//     which needs the pattern's own statistics: a cached statement's
//     generic plan would guess, so the query is not prepared.
//   - One or two characters on either: no trigram to look up, so the list
//     walks pets in id order (the primary key, or the status or category
//     index of its other filters) and stops at limit+1 matches. Its cost
//     is the number of pets walked to find them: a page of a common
//     letter is quick; a pair that no name holds reads every live pet the
//     other filters allow.
func (s *Store) nameSearch(q string) *nameSearch {
	if q == "" {
		return nil
	}
	key := foldName(q)
	like := func(w *where) { w.add("p.name_key LIKE " + w.arg(likePattern(q)) + ` ESCAPE '\'`) }
	n := &nameSearch{conds: like}
	if utf8.RuneCountInString(key) < minTrigramQuery {
		return n
	}
	if s.dialect == DialectPostgres {
		n.unprepared = true
		return n
	}
	n.from = ` FROM pets_fts f JOIN pets p ON p.id = f.rowid JOIN inventory i ON i.pet_id = p.id JOIN categories c ON c.id = p.category_id`
	n.key = "f.rowid"
	n.conds = func(w *where) {
		w.add("pets_fts MATCH " + w.arg(ftsPhrase(key)))
		like(w)
	}
	return n
}

// ftsPhrase quotes s as one FTS5 string: the trigram tokenizer then matches
// the rows that contain s, whatever characters it holds.
func ftsPhrase(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
