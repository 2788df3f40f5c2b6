package db

import (
	"context"
	"fmt"
)

// CatalogVersion returns the change counter of the catalog and inventory
// (migration 00003): it grows with every committed change to pets,
// categories or stock, whatever wrote it, so two reads that return the same
// value saw the same catalog. Conditional GETs (SPEC §2) use it to answer
// 304 without running their list. It is one small read: the sum of the
// counter's slots (64 rows on PostgreSQL, one on SQLite).
func (s *Store) CatalogVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := s.get(ctx, &v, `SELECT COALESCE(SUM(version), 0) FROM catalog_changes`); err != nil {
		return 0, fmt.Errorf("catalog version: %w", err)
	}
	return v, nil
}
