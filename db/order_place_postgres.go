package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"
)

// A batch of lone orders on PostgreSQL (order_batch.go) is placed by
// placeOrdersStatement: one statement for every order of the batch (a
// round for each pet's second order, and so on), one round trip and one
// firing of the tables' statement triggers for them all, instead of the
// lock, four writes and the events of each. It follows the one order path
// as far as one statement can:
//   - The rule is takeOrder's. The statement applies it to each pet as it
//     locks it, since no round trip may come between; Go then applies
//     takeOrder to that same locked pet, which words the refusals and sets
//     the order's price, and an answer of the statement that differs from
//     the rule's is an error. TestOrderPathsAgree places random sequences
//     (and TestOrderBatchPathsAgree random batches) through both paths and
//     compares every row and event.
//   - The events are placedEvents', marshalled in Go. What only the
//     locked row tells (the order's id, its price and total, the pet's
//     stock and status) is a hole the statement fills with that value's
//     JSON; the statement knows nothing of the events' fields.

// A hole is a value of the placed events that the statement fills in. Go
// marshals the events with the hole's sentinel in its place, then swaps
// the sentinel's JSON token for the hole's mark: a control character,
// which encoding/json never writes raw (it escapes them in strings), so no
// other text of the JSON can be taken for a mark. The sentinels are values
// no real order or pet has.
const (
	holeOrderID       = -9_000_000_000_000_001
	holeStock         = -9_000_000_000_000_002
	holeStatus        = "(status)"
	holePrice   Money = -9_000_000_000_000_003
	holeTotal   Money = -9_000_000_000_000_004
)

// placeHoles maps each sentinel's JSON token to its mark, chr(mark) in
// placeOrdersStatement, which fills mark n with the value it names there.
var placeHoles = map[string]byte{
	strconv.FormatInt(holeOrderID, 10): 1,
	strconv.FormatInt(holeStock, 10):   2,
	mustJSON(holeStatus):               3,
	mustJSON(holePrice):                4,
	mustJSON(holeTotal):                5,
}

// mustJSON is v's JSON, for values that always marshal.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// placeOrdersStatement places the orders of one round, each for another
// pet: $1..$9 are arrays with an element per order (pet, quantity, ship
// date, owner's key and shopper, then type and data of each of its two
// events, in placedEvents' order), $10 the time and $11 the currency. It
// locks the pets in id order (locked: the lock of lockPet) and, for each
// order whose pet is available with enough stock (ok: takeOrder's rule),
// writes the stock, the status when it changes (storeStock), the order with
// the locked price, and the events with their holes filled. Money's JSON is
// an amount with exactly two decimals, as numeric(20, 2) writes it. It
// returns a row per order, in their order: its pet as it was locked
// (NULL: no such live pet) and the new order's id (NULL when the rule
// refused it).
//
// The writes see the rows as locked: a data-modifying CTE reads the
// statement's snapshot, and when the row was changed since then (the lock
// waited for that writer), PostgreSQL re-reads the newest version, the
// one locked, before updating it. That re-read happens only for a row the
// snapshot's version lets through, so the pet's UPDATE compares the new
// status with the locked one (ok.was), never with its own snapshot's: a
// status changed by a writer the lock waited for would otherwise skip it.
// The events INSERT draws its ids itself after making sure the transaction
// has an id, as the horizon requires (db/internal/outbox).
const placeOrdersStatement = `WITH req AS (
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::timestamptz[], $4::bigint[], $5::text[],
			$6::text[], $7::text[], $8::text[], $9::text[])
			WITH ORDINALITY AS r(pet_id, qty, ship, key_id, shopper, t1, d1, t2, d2, n)),
	locked AS (
		SELECT p.id, p.status, p.price, i.quantity FROM pets p JOIN inventory i ON i.pet_id = p.id
		WHERE p.id = ANY($1::bigint[]) AND p.deleted_at IS NULL ORDER BY p.id FOR UPDATE OF p, i),
	ok AS (
		SELECT r.n, l.id, r.qty, r.ship, r.key_id, r.shopper, r.t1, r.d1, r.t2, r.d2, l.price,
			l.price * r.qty AS total, l.quantity - r.qty AS stock, l.status AS was,
			CASE WHEN l.quantity - r.qty > 0 THEN 'available' ELSE 'pending' END AS status
		FROM req r JOIN locked l ON l.id = r.pet_id WHERE l.status = 'available' AND l.quantity >= r.qty),
	inv AS (
		UPDATE inventory i SET quantity = ok.stock, updated_at = $10 FROM ok WHERE i.pet_id = ok.id),
	pet AS (
		UPDATE pets p SET status = ok.status, updated_at = $10 FROM ok WHERE p.id = ok.id AND ok.status <> ok.was),
	ord AS (
		INSERT INTO orders (pet_id, quantity, ship_date, state, api_key_id, shopper_id, created_at, updated_at,
			unit_price, currency)
		SELECT ok.id, ok.qty, ok.ship, 'open', ok.key_id, ok.shopper, $10, $10, ok.price, $11 FROM ok ORDER BY ok.n
		RETURNING id, pet_id),
	ev AS (
		INSERT INTO events (type, data, created_at)
		SELECT v.t, replace(replace(replace(replace(replace(v.d,
				chr(1), ord.id::text),
				chr(2), ok.stock::text),
				chr(3), to_json(ok.status)::text),
				chr(4), to_json((ok.price::numeric / 100)::numeric(20, 2)::text)::text),
				chr(5), to_json((ok.total::numeric / 100)::numeric(20, 2)::text)::text), $10
		FROM ok JOIN ord ON ord.pet_id = ok.id CROSS JOIN LATERAL (VALUES (ok.t1, ok.d1, 0), (ok.t2, ok.d2, 1)) AS v(t, d, o)
		WHERE pg_current_xact_id() IS NOT NULL
		ORDER BY ok.n, v.o)
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
// sets each order's id and price, or its err when the rule refused it.
func placeRound(ctx context.Context, tx *Tx, round []*queuedOrder) error {
	n := len(round)
	pets, qtys, keys := make([]int64, n), make([]int64, n), make([]sql.NullInt64, n)
	ships, shoppers := make([]sql.NullString, n), make([]sql.NullString, n)
	t1, d1, t2, d2 := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, q := range round {
		o := q.order
		o.CreatedAt = tx.now
		events, err := placedEventsWithHoles(o)
		if err != nil {
			return err
		}
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
		t1[i], d1[i], t2[i], d2[i] = events[0].typ, events[0].data, events[1].typ, events[1].data
	}
	var rows []struct {
		N       int64          `db:"n"`
		Status  sql.NullString `db:"status"`
		Stock   sql.NullInt64  `db:"quantity"`
		Price   sql.NullInt64  `db:"price"`
		OrderID sql.NullInt64  `db:"order_id"`
	}
	err := tx.sel(ctx, &rows, placeOrdersStatement, pq.Array(pets), pq.Array(qtys), pq.GenericArray{A: ships},
		pq.GenericArray{A: keys}, pq.GenericArray{A: shoppers}, pq.Array(t1), pq.Array(d1), pq.Array(t2), pq.Array(d2),
		tx.now, round[0].order.Currency)
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
		if err := ruleAgrees(q, r.Status.String, r.Stock.Int64, Money(r.Price.Int64), r.OrderID); err != nil {
			return err
		}
		if r.OrderID.Valid {
			tx.wroteEvents = true
		}
	}
	return nil
}

// ruleAgrees applies takeOrder to q's pet as the statement locked it
// (status, stock, price) and checks the statement did what the rule says:
// placed it (id) or refused it. It sets the order's id and price, or q.err
// to the rule's refusal; a disagreement is an error.
func ruleAgrees(q *queuedOrder, status string, stock int64, price Money, id sql.NullInt64) error {
	o := q.order
	locked := Pet{ID: o.PetID, Status: status, Stock: stock, Price: price}
	ruled := takeOrder(&locked, o)
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

// placedEventsWithHoles are the placedEvents of o, a lone order, with
// holes (placeHoles) for what the statement fills in. It checks that each
// hole was found once: a value that spelled a sentinel's token whole (a
// buyer's name could; a lone order has no buyer) fails the order rather
// than being filled.
func placedEventsWithHoles(o *Order) ([]pendingEvent, error) {
	p := &Pet{ID: o.PetID, Stock: holeStock, Status: holeStatus}
	t := *o
	t.ID, t.UnitPrice, t.Total = holeOrderID, holePrice, holeTotal
	events, err := placedEvents(p, &t)
	if err != nil {
		return nil, err
	}
	var found [6]int
	for i := range events {
		events[i].data = punchHoles(events[i].data, &found)
	}
	if len(events) != 2 || found != [6]int{0, 1, 1, 1, 1, 1} {
		return nil, fmt.Errorf("place order: %d events with holes found %v, want 2 with each of 5 holes once", len(events), found[1:])
	}
	return events, nil
}

// punchHoles swaps, in js (compact JSON as encoding/json writes it), each
// whole token that is a sentinel of placeHoles for its mark, and counts
// the marks it wrote in found. A token is a string with its quotes, or a
// number: the text of a string never is one.
func punchHoles(js string, found *[6]int) string {
	var b strings.Builder
	b.Grow(len(js))
	kept := 0 // js[:kept] is written
	for i := 0; i < len(js); {
		end := i + 1
		switch c := js[i]; {
		case c == '"':
			for end < len(js) && js[end] != '"' {
				if js[end] == '\\' {
					end++
				}
				end++
			}
			end = min(end+1, len(js))
		case c == '-' || c >= '0' && c <= '9':
			for end < len(js) && strings.IndexByte("+-.0123456789eE", js[end]) >= 0 {
				end++
			}
		}
		if mark, ok := holeOf(js[i:end]); ok {
			b.WriteString(js[kept:i])
			b.WriteByte(mark)
			found[mark]++
			kept = end
		}
		i = end
	}
	b.WriteString(js[kept:])
	return b.String()
}

// holeOf is the mark of tok when it is a sentinel. Every sentinel's token
// starts with a minus sign or, as a string, with "- or "(, so most tokens
// are passed over without a lookup.
func holeOf(tok string) (byte, bool) {
	if tok[0] != '-' && (len(tok) < 2 || tok[0] != '"' || tok[1] != '-' && tok[1] != '(') {
		return 0, false
	}
	mark, ok := placeHoles[tok]
	return mark, ok
}
