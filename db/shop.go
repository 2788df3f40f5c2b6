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

// PlaceShopOrders places a storefront checkout like PlaceOrders, and
// refuses it whole when the shopper's open orders would then hold more than
// maxOpenUnits units (SPEC §9: PETSTORE_SHOP_MAX_OPEN_UNITS), so that one
// browser cannot reserve the whole catalog. Errors: those of PlaceOrders,
// and too_many_open_units (nothing placed).
func (s *Store) PlaceShopOrders(ctx context.Context, shopperID string, maxOpenUnits int64, lines []NewOrder) ([]*Order, error) {
	if shopperID == "" || maxOpenUnits < 1 {
		return nil, fmt.Errorf("place shop orders: need a shopper and a positive cap, got %q and %d", shopperID, maxOpenUnits)
	}
	return s.placeOrders(ctx, Owner{ShopperID: shopperID}, lines, maxOpenUnits)
}

// shopperLockSpace ("SHOP") is the first key of the PostgreSQL advisory
// locks that serialise one shopper's checkouts: the two-key form never
// meets the one-key locks of migrations.
const shopperLockSpace = 0x53484f50

// checkOpenUnits refuses lines when they would bring shopper's open orders
// past max units. It runs first in the checkout's transaction, holding the
// shopper's lock until commit, so two checkouts of one shopper at once
// cannot both fit under the cap: on PostgreSQL an advisory lock on the
// shopper (taken before any pet's lock, always in that order), on SQLite
// the single writer every transaction here already waits for.
func (tx *Tx) checkOpenUnits(ctx context.Context, shopper string, lines []NewOrder, max int64) error {
	if tx.dialect() == DialectPostgres {
		if _, err := tx.exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, shopperLockSpace, shopper); err != nil {
			return fmt.Errorf("lock shopper: %w", err)
		}
	}
	var held int64
	err := tx.get(ctx, &held, `SELECT COALESCE(SUM(quantity), 0) FROM orders WHERE shopper_id = $1 AND state = 'open'`, shopper)
	if err != nil {
		return fmt.Errorf("count open units: %w", err)
	}
	var adding int64
	for _, in := range lines {
		adding += *in.Quantity
	}
	if held+adding > max {
		return &Error{Code: ETooManyOpenUnits, Message: openUnitsMessage(held, adding, max)}
	}
	return nil
}

// openUnitsMessage says why a checkout went past the cap, and what fits.
func openUnitsMessage(held, adding, max int64) string {
	msg := fmt.Sprintf("Nothing was ordered: one shopper may have at most %d pets in open orders, and this checkout would bring yours to %d.", max, held+adding)
	if room := max - held; room > 0 {
		return msg + fmt.Sprintf(" You can order %d more.", room)
	}
	return msg + " Wait until an order is complete, or cancel one."
}
