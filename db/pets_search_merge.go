package db

import (
	"context"
	"fmt"
)

// searchMergePages is how many pages of SQLite's search index one merge
// statement writes at most (about 0.8 MB): each statement is a write
// transaction of its own, so writers wait for one step, not for the whole
// merge.
const searchMergePages = 200

// searchMergeSteps bounds the steps of one MergeSearchIndex: 1,000 steps
// rewrite an index of about 800 MB, far more than a catalog's names take.
const searchMergeSteps = 1000

// MergeSearchIndex merges the segments of SQLite's search index (pets_fts)
// into one, a step of searchMergePages pages at a time, and returns the
// steps that did work; on PostgreSQL it does nothing. FTS5 writes the
// names of each write transaction as a new segment and merges them only
// when four pile up at one level, so a catalog built over time or by a
// large import holds several; a search looks each of its terms up in every
// segment, so its cost grew with their number (issue 44: 4 segments at
// 200,000 seeded pets cost a search twice what the one segment of 10,000
// did). Housekeeping runs it at start and every hour.
func (s *Store) MergeSearchIndex(ctx context.Context) (int64, error) {
	if s.dialect != DialectSQLite {
		return 0, nil
	}
	// One connection, so that total_changes() sees the merge: FTS5 reports
	// whether a merge statement found work only through it (a statement
	// that found none changes one row, the command's own).
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("merge search index: %w", err)
	}
	defer conn.Close()
	var steps int64
	for steps < searchMergeSteps {
		var before, after int64
		if err := conn.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
			return steps, fmt.Errorf("merge search index: %w", err)
		}
		// A negative page count merges every segment, at whatever level.
		if _, err := conn.ExecContext(ctx, `INSERT INTO pets_fts (pets_fts, rank) VALUES ('merge', $1)`, -searchMergePages); err != nil {
			return steps, fmt.Errorf("merge search index: %w", err)
		}
		if err := conn.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after); err != nil {
			return steps, fmt.Errorf("merge search index: %w", err)
		}
		if after-before <= 1 {
			break
		}
		steps++
	}
	return steps, nil
}
