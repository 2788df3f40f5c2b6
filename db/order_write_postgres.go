package db

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// orderIDPlaceholder is how an Order with ID 0 starts as JSON: the id is
// the first field. writeOrderPostgres marshals the order before the
// database assigns its id and splices the id in (substr from character 8,
// just after these 7), so the event's data is exactly what json.Marshal
// gives for the stored order.
const orderIDPlaceholder = `{"id":0`

// placeOrderPostgres writes one order line in a single statement: the
// stock and status of its pet (locked by the caller), the order, and the
// events inventory.updated then order.created, in that id order. It is the
// same write as the SQLite path (INSERT order, writeStock, the events at
// commit), one round trip instead of four. The events INSERT draws its ids
// itself after making sure the transaction has an id, as the horizon
// requires (see eventHorizon).
const placeOrderPostgres = `WITH inv AS (
		UPDATE inventory SET quantity = $1, updated_at = $2 WHERE pet_id = $3),
	pet AS (
		UPDATE pets SET status = $4, updated_at = $2 WHERE id = $3),
	ord AS (
		INSERT INTO orders (pet_id, quantity, ship_date, state, api_key_id, shopper_id, created_at, updated_at)
		VALUES ($3, $5, $6, 'open', $7, $8, $2, $2) RETURNING id),
	ev AS (
		INSERT INTO events (type, data, created_at)
		SELECT v.t, v.d, $2 FROM ord CROSS JOIN LATERAL (VALUES
			($9::text, $10::text, 0),
			($11::text, '{"id":' || ord.id || substr($12::text, 8), 1)) AS v(t, d, o)
		WHERE pg_current_xact_id() IS NOT NULL
		ORDER BY v.o)
	SELECT id FROM ord`

// writeOrderPostgres stores order o of pet p (p already holds the stock
// and status after the order) and sets o.ID.
func (tx *Tx) writeOrderPostgres(ctx context.Context, p *Pet, o *Order, keyID *int64, shopper *string) error {
	item, err := json.Marshal(p.Inventory())
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	order, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	if !strings.HasPrefix(string(order), orderIDPlaceholder) {
		return fmt.Errorf("encode event: order JSON %q does not start with %s", order, orderIDPlaceholder)
	}
	err = tx.get(ctx, &o.ID, placeOrderPostgres, p.Stock, tx.now, p.ID, p.Status, o.Quantity, o.ShipDate, keyID, shopper,
		EventInventoryUpdated, string(item), EventOrderCreated, string(order))
	if err != nil {
		return fmt.Errorf("place order: %w", err)
	}
	tx.wroteEvents = true
	return nil
}
