package db

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"
)

// ExportBatch is how many orders one query of an export reads: the
// export holds one batch at a time, whatever the number of orders.
const ExportBatch = 1000

// ExportedOrder is one order as the export writes it (SPEC §16): every
// state, cancelled included, with its pet's name (a deleted pet's too) and
// the storefront buyer when there is one.
type ExportedOrder struct {
	ID         int64          `db:"id"`
	PlacedAt   time.Time      `db:"created_at"`
	PetID      int64          `db:"pet_id"`
	PetName    string         `db:"pet_name"`
	Quantity   int64          `db:"quantity"`
	UnitPrice  Money          `db:"unit_price"`
	Total      Money          `db:"total"`
	Currency   string         `db:"currency"`
	Status     string         `db:"state"`
	ShipDate   *time.Time     `db:"ship_date"`
	BuyerName  sql.NullString `db:"buyer_name"`
	BuyerEmail sql.NullString `db:"buyer_email"`
	BuyerPhone sql.NullString `db:"buyer_phone"`
}

const exportCols = `o.id, o.created_at, o.pet_id, p.name AS pet_name, o.quantity, o.unit_price,
	o.unit_price * o.quantity AS total, COALESCE(o.currency, '') AS currency, o.state, o.ship_date,
	ck.name AS buyer_name, ck.email AS buyer_email, ck.phone AS buyer_phone`
const exportFrom = ` FROM orders o JOIN pets p ON p.id = o.pet_id LEFT JOIN checkouts ck ON ck.id = o.checkout_id`

// ExportOrders hands fn the orders placed within r (whole days in UTC), in
// the order they were placed (by time, then id), ExportBatch at a time:
// each batch is one query continuing after the last row of the one
// before (keyset on the orders_created index, which each query enters at
// the last row's time, so no batch reads the rows of the ones before), so
// memory stays that of one batch. fn's error stops the export and is
// returned.
func (s *Store) ExportOrders(ctx context.Context, r DateRange, fn func([]*ExportedOrder) error) error {
	first := `SELECT ` + exportCols + exportFrom + `
		WHERE o.created_at >= $1 AND o.created_at < $2
		ORDER BY o.created_at, o.id LIMIT ` + strconv.Itoa(ExportBatch)
	next := `SELECT ` + exportCols + exportFrom + `
		WHERE o.created_at >= $1 AND o.created_at < $2 AND (o.created_at > $1 OR o.id > $3)
		ORDER BY o.created_at, o.id LIMIT ` + strconv.Itoa(ExportBatch)
	var last *ExportedOrder
	batch := make([]*ExportedOrder, 0, ExportBatch)
	for {
		batch = batch[:0]
		var err error
		if last == nil {
			err = s.sel(ctx, &batch, first, r.Start(), r.End())
		} else {
			err = s.sel(ctx, &batch, next, last.PlacedAt, r.End(), last.ID)
		}
		if err != nil {
			return fmt.Errorf("export orders: %w", err)
		}
		if len(batch) == 0 {
			return nil
		}
		for _, o := range batch {
			o.PlacedAt = o.PlacedAt.UTC()
		}
		if err := fn(batch); err != nil {
			return err
		}
		if len(batch) < ExportBatch {
			return nil
		}
		last = batch[len(batch)-1]
	}
}
