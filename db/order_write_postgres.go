package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// orderIDPlaceholder is how an Order with ID 0 starts as JSON: the id is
// the first field. placeOrderPostgres gets the order marshalled before the
// database assigns its id and reads its price, cut before the price fields
// (orderPriceFields, always the last ones); the statement splices the id
// in (substr from character 8, just after these 7) and appends the price
// fields, so the event's data is exactly what json.Marshal gives for the
// stored order.
const orderIDPlaceholder = `{"id":0`

// orderPriceFields is where an Order's JSON reaches its price snapshot.
// A string value cannot hold it: its quotes would be escaped.
const orderPriceFields = `,"unitPrice":`

// placeOrderStatement checks and writes one order line in a single
// statement: it locks the pet (locked, the same lock as lockPet) and,
// only when the pet is available with enough stock (ok), writes its stock,
// its status when the order changes it (writeStock's rule), the order, and
// the events inventory.updated then order.created, in that id order. It returns the pet as it was locked,
// with the new order's id (NULL when the rules refused it), and no row
// when there is no such live pet: what PlaceOrder's errors are worded
// from. The rules are those of placeOrder's checks and deriveStatus (stock
// left > 0: available, else pending, as this order is open); the inventory
// event's data is InventoryItem's JSON.
//
// The writes see the rows as locked: a data-modifying CTE reads the
// statement's snapshot, and when the row was changed since then (the lock
// waited for that writer), PostgreSQL re-reads the newest version, the
// one locked, before updating it. That re-read happens only for a row the
// snapshot's version lets through, so the pet's UPDATE compares the new
// status with the locked one (ok.was), never with its own snapshot's: a
// status changed by a writer the lock waited for would otherwise skip it. The events INSERT draws its ids itself
// after making sure the transaction has an id, as the horizon requires
// (see eventHorizon).
const placeOrderStatement = `WITH locked AS (
		SELECT p.id, p.status, p.price, i.quantity FROM pets p JOIN inventory i ON i.pet_id = p.id
		WHERE p.id = $1 AND p.deleted_at IS NULL FOR UPDATE OF p, i),
	ok AS (
		SELECT id, price, price * $2 AS total, quantity - $2 AS stock, status AS was,
			CASE WHEN quantity - $2 > 0 THEN 'available' ELSE 'pending' END AS status
		FROM locked WHERE status = 'available' AND quantity >= $2),
	inv AS (
		UPDATE inventory i SET quantity = ok.stock, updated_at = $3 FROM ok WHERE i.pet_id = ok.id),
	pet AS (
		UPDATE pets p SET status = ok.status, updated_at = $3 FROM ok WHERE p.id = ok.id AND ok.status <> ok.was),
	ord AS (
		INSERT INTO orders (pet_id, quantity, ship_date, state, api_key_id, shopper_id, created_at, updated_at,
			unit_price, currency, checkout_id)
		SELECT ok.id, $2, $4, 'open', $5, $6, $3, $3, ok.price, $10, $11 FROM ok RETURNING id),
	ev AS (
		INSERT INTO events (type, data, created_at)
		SELECT v.t, v.d, $3 FROM ok CROSS JOIN ord CROSS JOIN LATERAL (VALUES
			($7::text, '{"petId":' || ok.id || ',"quantity":' || ok.stock || ',"status":"' || ok.status || '"}', 0),
			($8::text, '{"id":' || ord.id || substr($9::text, 8) ||
				',"unitPrice":"' || (ok.price / 100) || '.' || lpad((ok.price % 100)::text, 2, '0') ||
				'","total":"' || (ok.total / 100) || '.' || lpad((ok.total % 100)::text, 2, '0') ||
				'","currency":"' || $10::text || '"}', 1)) AS v(t, d, o)
		WHERE pg_current_xact_id() IS NOT NULL
		ORDER BY v.o)
	SELECT l.status, l.quantity, l.price, ord.id AS order_id FROM locked l LEFT JOIN ord ON true`

// placeOrderPostgres places order o (its ID left 0) in one statement, run
// by get at time now, and sets o.ID. Errors: those of placeOrder's checks.
func placeOrderPostgres(ctx context.Context, get getter, now time.Time, o *Order, keyID *int64, shopper *string) error {
	order, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	head, _, found := strings.Cut(string(order), orderPriceFields)
	if !strings.HasPrefix(head, orderIDPlaceholder) || !found {
		return fmt.Errorf("encode event: order JSON %q does not start with %s or has no %s", order, orderIDPlaceholder, orderPriceFields)
	}
	var r struct {
		Status  string        `db:"status"`
		Stock   int64         `db:"quantity"`
		Price   Money         `db:"price"`
		OrderID sql.NullInt64 `db:"order_id"`
	}
	err = get(ctx, &r, placeOrderStatement, o.PetID, o.Quantity, now, o.ShipDate, keyID, shopper,
		EventInventoryUpdated, EventOrderCreated, head, o.Currency, o.CheckoutID)
	if errors.Is(err, sql.ErrNoRows) {
		return Invalid("petId", "pet %d does not exist", o.PetID)
	}
	if err != nil {
		return fmt.Errorf("place order: %w", err)
	}
	if !r.OrderID.Valid {
		p := Pet{ID: o.PetID, Status: r.Status, Stock: r.Stock}
		if err := checkOrder(&p, o.Quantity); err != nil {
			return err
		}
		return fmt.Errorf("place order: pet %d (%s, stock %d) refused an order of %d", o.PetID, r.Status, r.Stock, o.Quantity)
	}
	o.ID = r.OrderID.Int64
	o.UnitPrice, o.Total = r.Price, r.Price.Times(o.Quantity)
	return nil
}

// placeOrderPostgres places one line in the transaction.
func (tx *Tx) placeOrderPostgres(ctx context.Context, o *Order, keyID *int64, shopper *string) error {
	if err := placeOrderPostgres(ctx, tx.get, tx.now, o, keyID, shopper); err != nil {
		return err
	}
	tx.wroteEvents = true
	return nil
}

// placeSingleOrderPostgres places a lone order (the API's) with its one
// statement on its own, which PostgreSQL runs as a transaction of its own:
// one round trip instead of BEGIN, the statement and COMMIT. Errors: those
// of PlaceOrders.
func (s *Store) placeSingleOrderPostgres(ctx context.Context, owner Owner, in NewOrder, ship *time.Time) ([]*Order, error) {
	o := newOrder(*in.PetID, *in.Quantity, ship, s.Now().UTC(), s.Currency, nil)
	err := placeOrderPostgres(ctx, s.get, o.CreatedAt, o, owner.keyID(), owner.shopper())
	var coded *Error
	if errors.As(err, &coded) {
		return nil, &LineError{Line: 0, Err: err}
	}
	if err != nil {
		return nil, err
	}
	s.eventsCommitted()
	return []*Order{o}, nil
}
