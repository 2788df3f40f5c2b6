package db

import (
	"context"
	"fmt"
)

// PetSummary names a pet for an order history: deleted pets included,
// since their orders stay (SPEC §13).
type PetSummary struct {
	ID           int64  `db:"id"`
	Name         string `db:"name"`
	CategoryName string `db:"category_name"`
	Deleted      bool   `db:"deleted"`
}

// FindPetSummaries returns the name and category of each pet in ids that
// ever existed, live or deleted, keyed by id. It reads at most MaxLimit
// ids per query.
func (s *Store) FindPetSummaries(ctx context.Context, ids []int64) (map[int64]*PetSummary, error) {
	out := make(map[int64]*PetSummary, len(ids))
	for len(ids) > 0 {
		batch := ids[:min(len(ids), MaxLimit)]
		ids = ids[len(batch):]
		var w where
		w.add("p.id IN " + in(&w, batch))
		var rows []*PetSummary
		err := s.sel(ctx, &rows, `SELECT p.id, p.name, c.name AS category_name, (p.deleted_at IS NOT NULL) AS deleted
			FROM pets p JOIN categories c ON c.id = p.category_id`+w.String(), w.args...)
		if err != nil {
			return nil, fmt.Errorf("find pet summaries: %w", err)
		}
		for _, r := range rows {
			out[r.ID] = r
		}
	}
	return out, nil
}
