package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The lone order on PostgreSQL sits behind placeOrders' seam
// (Store.placeLone): the API's order of one line, placed in its batch's
// transaction (order_batch.go) by one statement, one round trip instead
// of the lock, four writes and the events. It follows the
// one order path as far as one statement can:
//   - The rule is takeOrder's. The statement applies it to the pet as it
//     locks it, since no round trip may come between; Go then applies
//     takeOrder to that same locked pet, which words the refusals and sets
//     the order's price, and an answer of the statement that differs from
//     the rule's is an error. TestOrderPathsAgree places random sequences
//     through both paths and compares every row and event.
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
// placeOrderStatement, which fills mark n with the value it names there.
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

// placeOrderStatement places one order, locking its pet (locked: the lock
// of lockPet) and, only when the pet is available with enough stock (ok:
// takeOrder's rule), writing the stock, the status when it changes
// (storeStock), the order with the locked price, and the events with
// their holes filled ($7..$10: type and data of each, in placedEvents'
// order). Money's JSON is an amount with exactly two decimals, as
// numeric(20, 2) writes it. It returns the pet as it was locked, with the
// new order's id (NULL when the rule refused it), and no row when there is
// no such live pet.
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
			unit_price, currency)
		SELECT ok.id, $2, $4, 'open', $5, $6, $3, $3, ok.price, $11 FROM ok RETURNING id),
	ev AS (
		INSERT INTO events (type, data, created_at)
		SELECT v.t, replace(replace(replace(replace(replace(v.d,
				chr(1), ord.id::text),
				chr(2), ok.stock::text),
				chr(3), to_json(ok.status)::text),
				chr(4), to_json((ok.price::numeric / 100)::numeric(20, 2)::text)::text),
				chr(5), to_json((ok.total::numeric / 100)::numeric(20, 2)::text)::text), $3
		FROM ok CROSS JOIN ord CROSS JOIN LATERAL (VALUES ($7::text, $8::text, 0), ($9::text, $10::text, 1)) AS v(t, d, o)
		WHERE pg_current_xact_id() IS NOT NULL
		ORDER BY v.o)
	SELECT l.status, l.quantity, l.price, ord.id AS order_id FROM locked l LEFT JOIN ord ON true`

// placeLonePostgres places o, a lone order (its ID 0, no checkout), in tx
// with placeOrderStatement at o.CreatedAt, and sets its id and price.
// Errors: those of placeOrder.
func placeLonePostgres(ctx context.Context, tx *Tx, o *Order, owner Owner) error {
	events, err := placedEventsWithHoles(o)
	if err != nil {
		return err
	}
	var r struct {
		Status  string        `db:"status"`
		Stock   int64         `db:"quantity"`
		Price   Money         `db:"price"`
		OrderID sql.NullInt64 `db:"order_id"`
	}
	err = tx.get(ctx, &r, placeOrderStatement, o.PetID, o.Quantity, o.CreatedAt, o.ShipDate, owner.keyID(), owner.shopper(),
		events[0].typ, events[0].data, events[1].typ, events[1].data, o.Currency)
	if errors.Is(err, sql.ErrNoRows) {
		return errNoSuchPet(o.PetID)
	}
	if err != nil {
		return fmt.Errorf("place order: %w", err)
	}
	if r.OrderID.Valid {
		tx.wroteEvents = true
	}
	locked := Pet{ID: o.PetID, Status: r.Status, Stock: r.Stock, Price: r.Price}
	ruled := takeOrder(&locked, o)
	switch {
	case ruled == nil && r.OrderID.Valid:
		o.ID = r.OrderID.Int64
		return nil
	case ruled != nil && !r.OrderID.Valid:
		return ruled
	}
	return fmt.Errorf("place order: the statement (order %d, placed %t) and the rule (%v) disagree on %d of pet %d (%s, stock %d)",
		r.OrderID.Int64, r.OrderID.Valid, ruled, o.Quantity, o.PetID, r.Status, r.Stock)
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
