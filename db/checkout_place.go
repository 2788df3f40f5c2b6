package db

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// LineError says which line of a checkout failed.
type LineError struct {
	Line int // 0-based
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line+1, e.Err) }

// Unwrap exposes the line's own error, so ErrorCode sees its code.
func (e *LineError) Unwrap() error { return e.Err }

// PlaceCheckout places a storefront checkout: the buyer's details and
// every line in one transaction, all or nothing, refused whole when the
// shopper's open orders would then hold more than maxOpenUnits units
// (SPEC §9: PETSTORE_SHOP_MAX_OPEN_UNITS). Each order gets the preferred
// date as its shipDate. Errors: validation_failed (the buyer's details,
// with details naming the form's fields; no lines at all, the empty
// cart), a *LineError wrapping a line's validation_failed (also for a
// pet that does not exist), pet_not_available or insufficient_stock,
// too_many_open_units (nothing placed).
func (s *Store) PlaceCheckout(ctx context.Context, shopperID string, maxOpenUnits int64, in NewCheckout, lines []NewOrder) (*Checkout, error) {
	if shopperID == "" || maxOpenUnits < 1 {
		return nil, fmt.Errorf("place checkout: need a shopper and a positive cap, got %q and %d", shopperID, maxOpenUnits)
	}
	ship, err := in.Validate(today(s.Now()))
	if err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, Errorf(EValidationFailed, "Nothing to order: give at least one pet.")
	}
	for i, line := range lines {
		line.ShipDate = nil // the checkout's date is every line's
		if _, err := line.Validate(); err != nil {
			return nil, &LineError{Line: i, Err: err}
		}
	}
	return inTx(ctx, s, func(tx *Tx) (*Checkout, error) {
		c := &Checkout{ShopperID: shopperID, Name: in.Name, Email: in.Email, Phone: in.Phone}
		return c, tx.placeCheckout(ctx, c, lines, ship, maxOpenUnits)
	})
}

// placeCheckout places the checkout c and an order for each of its
// validated lines, shipping on ship, in tx: the shopper's cap first
// (checkOpenUnits), then the checkout's row, then every pet locked
// (lockPets) and each line placed by placeOrder, with its audit entry. A
// line the rule refuses comes back as a *LineError.
func (tx *Tx) placeCheckout(ctx context.Context, c *Checkout, lines []NewOrder, ship *time.Time, maxOpenUnits int64) error {
	owner := Owner{ShopperID: c.ShopperID}
	if err := tx.checkOpenUnits(ctx, c.ShopperID, lines, maxOpenUnits); err != nil {
		return err
	}
	if err := tx.insertCheckout(ctx, c); err != nil {
		return err
	}
	pets, err := tx.lockPets(ctx, lines)
	if err != nil {
		return err
	}
	bought := &purchase{checkoutID: &c.ID, customer: c.Customer()}
	c.Orders = make([]*Order, len(lines))
	for i, in := range lines {
		var shipDate *time.Time
		if ship != nil {
			d := *ship
			shipDate = &d
		}
		o := newOrder(*in.PetID, *in.Quantity, shipDate, tx.now, tx.store.Currency, bought)
		if err := tx.placeOrder(ctx, owner, pets[o.PetID], o); err != nil {
			return lineError(i, err)
		}
		if err := tx.auditPlaced(tx.ctx, o); err != nil {
			return err
		}
		c.Orders[i] = o
	}
	return nil
}

// lineError is err as line i's: a coded error comes back as a *LineError,
// anything else (an outage, a bug) as it is.
func lineError(i int, err error) error {
	var coded *Error
	if errors.As(err, &coded) {
		return &LineError{Line: i, Err: err}
	}
	return err
}

// insertCheckout writes c, setting its id and time.
func (tx *Tx) insertCheckout(ctx context.Context, c *Checkout) error {
	c.CreatedAt = tx.now
	var phone *string
	if c.Phone != "" {
		phone = &c.Phone
	}
	err := tx.get(ctx, &c.ID, `INSERT INTO checkouts (shopper_id, name, email, email_key, phone, created_at, name_key, phone_key)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`, c.ShopperID, c.Name, c.Email, foldEmail(c.Email), phone, tx.now,
		foldName(c.Name), phoneKey(c.Phone))
	if err != nil {
		return fmt.Errorf("insert checkout: %w", err)
	}
	return nil
}

// lockPets locks every pet of the lines in id order before any line
// writes, and returns them by id (a pet that does not exist is absent,
// for its line to report). Locking line by line would deadlock on
// PostgreSQL: two carts naming the same pets in opposite orders. The lines
// then work on these copies, which they keep up to date, instead of
// reading each pet again.
func (tx *Tx) lockPets(ctx context.Context, lines []NewOrder) (map[int64]*Pet, error) {
	ids := make([]int64, 0, len(lines))
	for _, in := range lines {
		ids = append(ids, *in.PetID)
	}
	slices.Sort(ids)
	pets := make(map[int64]*Pet, len(ids))
	for _, id := range slices.Compact(ids) {
		p, err := tx.lockPet(ctx, id)
		switch {
		case err == nil:
			pets[id] = p
		case ErrorCode(err) != ENotFound:
			return nil, err
		}
	}
	return pets, nil
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
