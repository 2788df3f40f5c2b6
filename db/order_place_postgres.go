package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/lib/pq"
)

// A batch of lone orders on PostgreSQL (order_batch.go) is placed by
// placeOrdersStatement: one statement for the orders of a round (a round
// for each pet's second order, and so on), one round trip and one firing
// of the tables' statement triggers for them all, instead of the lock and
// three writes of each. It follows the one order path as far as one
// statement can:
//   - The rule is takeOrder's. The statement applies it to each pet as it
//     locks it, since no round trip may come between, and returns each pet
//     as it locked it; Go then applies takeOrder to that same locked pet,
//     which words the refusals, sets the order's price and leaves the pet
//     as the order left it, and an answer of the statement that differs
//     from the rule's is an error. TestOrderPathsAgree places random
//     sequences (and random batches) through both paths and compares
//     every row and event.
//   - The events are recorded by placed, from that pet and the order the
//     statement wrote, as on every other path, and written with the
//     transaction's other events at commit (flushEvents): one statement
//     more for the batch, none per order.

// placeOrdersStatement places the orders of one round, each for another
// pet: $1..$5 are arrays with an element per order (pet, quantity, ship
// date, owner's key and shopper), $6 the time and $7 the currency. It
// locks the pets in id order (locked: the lock of lockPet) and, for each
// order whose pet is available with enough stock (ok: takeOrder's rule),
// writes the stock, the status when it changes (storeStock) and the order
// with the locked price. It returns a row per order, in their order: its
// pet as it was locked (NULL: no such live pet) and the new order's id
// (NULL when the rule refused it).
//
// The writes see the rows as locked: a data-modifying CTE reads the
// statement's snapshot, and when the row was changed since then (the lock
// waited for that writer), PostgreSQL re-reads the newest version, the
// one locked, before updating it. That re-read happens only for a row the
// snapshot's version lets through, so the pet's UPDATE compares the new
// status with the locked one (ok.was), never with its own snapshot's: a
// status changed by a writer the lock waited for would otherwise skip it.
const placeOrdersStatement = `WITH req AS (
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::timestamptz[], $4::bigint[], $5::text[])
			WITH ORDINALITY AS r(pet_id, qty, ship, key_id, shopper, n)),
	locked AS (
		SELECT p.id, p.status, p.price, i.quantity FROM pets p JOIN inventory i ON i.pet_id = p.id
		WHERE p.id = ANY($1::bigint[]) AND p.deleted_at IS NULL ORDER BY p.id FOR UPDATE OF p, i),
	ok AS (
		SELECT r.n, l.id, r.qty, r.ship, r.key_id, r.shopper, l.price,
			l.quantity - r.qty AS stock, l.status AS was,
			CASE WHEN l.quantity - r.qty > 0 THEN 'available' ELSE 'pending' END AS status
		FROM req r JOIN locked l ON l.id = r.pet_id WHERE l.status = 'available' AND l.quantity >= r.qty),
	inv AS (
		UPDATE inventory i SET quantity = ok.stock, updated_at = $6 FROM ok WHERE i.pet_id = ok.id),
	pet AS (
		UPDATE pets p SET status = ok.status, updated_at = $6 FROM ok WHERE p.id = ok.id AND ok.status <> ok.was),
	ord AS (
		INSERT INTO orders (pet_id, quantity, ship_date, state, api_key_id, shopper_id, created_at, updated_at,
			unit_price, currency)
		SELECT ok.id, ok.qty, ok.ship, 'open', ok.key_id, ok.shopper, $6, $6, ok.price, $7 FROM ok ORDER BY ok.n
		RETURNING id, pet_id)
	SELECT r.n, l.status, l.quantity, l.price, ord.id AS order_id
	FROM req r LEFT JOIN locked l ON l.id = r.pet_id LEFT JOIN ord ON ord.pet_id = r.pet_id ORDER BY r.n`

// placeInStatement is PostgreSQL's placeIn: the batch (inRounds' order)
// round by round, each by placeOrdersStatement.
func placeInStatement(ctx context.Context, tx *Tx, batch []*queuedOrder) error {
	for len(batch) > 0 {
		n := 1
		for n < len(batch) && batch[n].order.PetID > batch[n-1].order.PetID {
			n++
		}
		if err := placeRound(ctx, tx, batch[:n]); err != nil {
			return err
		}
		batch = batch[n:]
	}
	return nil
}

// placeRound places round, orders for distinct pets, by one statement, and
// sets each order's id and price and records its events, or sets its err
// when the rule refused it.
func placeRound(ctx context.Context, tx *Tx, round []*queuedOrder) error {
	n := len(round)
	pets, qtys, keys := make([]int64, n), make([]int64, n), make([]sql.NullInt64, n)
	ships, shoppers := make([]sql.NullString, n), make([]sql.NullString, n)
	for i, q := range round {
		o := q.order
		o.CreatedAt = tx.now
		pets[i], qtys[i] = o.PetID, o.Quantity
		if o.ShipDate != nil {
			ships[i] = sql.NullString{String: o.ShipDate.UTC().Format(time.RFC3339Nano), Valid: true}
		}
		if id := q.owner.keyID(); id != nil {
			keys[i] = sql.NullInt64{Int64: *id, Valid: true}
		}
		if sh := q.owner.shopper(); sh != nil {
			shoppers[i] = sql.NullString{String: *sh, Valid: true}
		}
	}
	var rows []struct {
		N       int64          `db:"n"`
		Status  sql.NullString `db:"status"`
		Stock   sql.NullInt64  `db:"quantity"`
		Price   sql.NullInt64  `db:"price"`
		OrderID sql.NullInt64  `db:"order_id"`
	}
	err := tx.sel(ctx, &rows, placeOrdersStatement, pq.Array(pets), pq.Array(qtys), pq.GenericArray{A: ships},
		pq.GenericArray{A: keys}, pq.GenericArray{A: shoppers}, tx.now, round[0].order.Currency)
	if err != nil {
		return fmt.Errorf("place orders: %w", err)
	}
	if len(rows) != n {
		return fmt.Errorf("place orders: %d rows for %d orders", len(rows), n)
	}
	for i, r := range rows {
		q := round[i]
		if r.N != int64(i+1) {
			return fmt.Errorf("place orders: row %d answers order %d", i+1, r.N)
		}
		if !r.Status.Valid {
			q.err = errNoSuchPet(q.order.PetID)
			continue
		}
		locked := &Pet{ID: q.order.PetID, Status: r.Status.String, Stock: r.Stock.Int64, Price: Money(r.Price.Int64)}
		if err := ruleAgrees(q, locked, r.OrderID); err != nil {
			return err
		}
		if q.err == nil {
			kept := len(tx.events)
			if err := tx.placed(locked, q.order); err != nil {
				return err
			}
			tx.eventsOf(q.ctx, kept)
		}
	}
	return nil
}

// ruleAgrees applies takeOrder to q's pet as the statement locked it
// (status, stock, price) and checks the statement did what the rule says:
// placed it (id) or refused it. It sets the order's id and price and
// leaves p as the order left it, or sets q.err to the rule's refusal; a
// disagreement is an error.
func ruleAgrees(q *queuedOrder, p *Pet, id sql.NullInt64) error {
	o := q.order
	status, stock := p.Status, p.Stock
	ruled := takeOrder(p, o)
	switch {
	case ruled == nil && id.Valid:
		o.ID = id.Int64
		return nil
	case ruled != nil && !id.Valid:
		q.err = ruled
		return nil
	}
	return fmt.Errorf("place order: the statement (order %d, placed %t) and the rule (%v) disagree on %d of pet %d (%s, stock %d)",
		id.Int64, id.Valid, ruled, o.Quantity, o.PetID, status, stock)
}
