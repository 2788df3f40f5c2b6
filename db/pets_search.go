package db

import (
	"slices"
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
// checks that the case-folded name_key holds the folded q, so the results
// are the plain scan's; the index only narrows the rows it checks:
//
//   - SQLite, q of three characters or more: the FTS5 trigram table
//     pets_fts, read in rowid (pet id) order, so the page stops after
//     limit+1 matches even when most pets match. It asks for a few of q's
//     trigrams that cover it (ftsCover) rather than the phrase of all of
//     them: each term costs a lookup in every segment of the index, and
//     the check on name_key does the rest. The check is instr(), not LIKE:
//     a LIKE on a bound pattern makes SQLite prepare the statement again
//     whenever the pattern changes (it may read a prefix off it).
//   - PostgreSQL, the same: the pg_trgm GIN index on name_key. The planner
//     picks it for a rare pattern and the id-ordered walk for a common one,
//     which needs the pattern's own statistics: a cached statement's
//     generic plan would guess, so the query is not prepared. (Planning
//     the join takes about 0.4 ms a search: planning pets alone and
//     reading the rows by id with a prepared statement took a tenth, but
//     without fresh statistics PostgreSQL then planned a search that
//     matches nothing as a sequential scan of pets; issue 44.)
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
	if s.dialect == DialectPostgres {
		n := &nameSearch{conds: func(w *where) { w.add("p.name_key LIKE " + w.arg(likePattern(q)) + ` ESCAPE '\'`) }}
		n.unprepared = utf8.RuneCountInString(key) >= minTrigramQuery
		return n
	}
	holds := func(w *where) { w.add("instr(p.name_key, " + w.arg(key) + ") > 0") }
	n := &nameSearch{conds: holds}
	if utf8.RuneCountInString(key) < minTrigramQuery {
		return n
	}
	n.from = ` FROM pets_fts f JOIN pets p ON p.id = f.rowid JOIN inventory i ON i.pet_id = p.id JOIN categories c ON c.id = p.category_id`
	n.key = "f.rowid"
	n.conds = func(w *where) {
		w.add("pets_fts MATCH " + w.arg(ftsCover(key)))
		holds(w)
	}
	return n
}

// ftsCover is the FTS5 query for the rows whose text holds every trigram
// of a cover of s (three characters or more): the trigrams at characters
// 0, 3, 6, ... and the last one, each once. A row that contains s holds
// them all; the caller checks the rest.
func ftsCover(s string) string {
	runes := []rune(s)
	var terms []string
	add := func(at int) {
		if t := ftsPhrase(string(runes[at : at+3])); !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	}
	for at := 0; at+3 <= len(runes); at += 3 {
		add(at)
	}
	add(len(runes) - 3)
	return strings.Join(terms, " AND ")
}

// ftsPhrase quotes s as one FTS5 string: the trigram tokenizer then matches
// the rows that contain s, whatever characters it holds.
func ftsPhrase(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
