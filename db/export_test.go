package db

import "context"

// MigrateUpTo applies the migrations up to version, for tests that start
// from an older schema.
func (s *Store) MigrateUpTo(ctx context.Context, version int64) error {
	p, err := s.provider()
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, version)
	return err
}

// ConcurrentIndexFrom is concurrentIndexFrom for tests.
const ConcurrentIndexFrom = concurrentIndexFrom

// CachedQueries lists the texts of the cached prepared statements.
func (s *Store) CachedQueries() []string {
	s.stmts.mu.RLock()
	defer s.stmts.mu.RUnlock()
	var qs []string
	for q := range s.stmts.m {
		qs = append(qs, q)
	}
	return qs
}
