package db

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// LineError says which line of a multi-line order failed.
type LineError struct {
	Line int // 0-based
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line+1, e.Err) }

// Unwrap exposes the line's own error, so ErrorCode sees its code.
func (e *LineError) Unwrap() error { return e.Err }

// PlaceOrder places one order. Errors: validation_failed (also for a pet
// that does not exist), pet_not_available, insufficient_stock.
func (s *Store) PlaceOrder(ctx context.Context, owner Owner, in NewOrder) (*Order, error) {
	os, err := s.PlaceOrders(ctx, owner, []NewOrder{in})
	if err != nil {
		var le *LineError
		if errors.As(err, &le) {
			return nil, le.Err
		}
		return nil, err
	}
	return os[0], nil
}

// PlaceOrders places every line in one transaction: all or nothing. A
// failing line comes back as a *LineError wrapping the codes of PlaceOrder;
// no lines at all is validation_failed (the storefront's empty cart).
func (s *Store) PlaceOrders(ctx context.Context, owner Owner, lines []NewOrder) ([]*Order, error) {
	return s.placeOrders(ctx, owner, lines, 0, nil)
}

// placeOrders is PlaceOrders with, when maxOpenUnits > 0, the cap of
// PlaceCheckout on owner's open units, and, when checkout is not nil, the
// checkout its orders belong to, written first in the same transaction.
// It is the one order path: every line is placed by placeOrder, by the
// rule of takeOrder; a lone order is placed in a batch with others
// (group commit), by placeOrder or, where the store has a faster way,
// PostgreSQL's one statement, which follows the same rule.
func (s *Store) placeOrders(ctx context.Context, owner Owner, lines []NewOrder, maxOpenUnits int64, checkout *Checkout) ([]*Order, error) {
	if len(lines) == 0 {
		return nil, Errorf(EValidationFailed, "Nothing to order: give at least one pet.")
	}
	ships := make([]*time.Time, len(lines))
	for i := range lines {
		ship, err := lines[i].Validate()
		if err != nil {
			return nil, &LineError{Line: i, Err: err}
		}
		ships[i] = ship
	}
	// A lone order goes to the next batch (order_batch.go). An audited
	// one (a staff key's) takes the transaction below, which writes its
	// audit entry beside it.
	if len(lines) == 1 && maxOpenUnits == 0 && checkout == nil && !audited(ctx) {
		o := newOrder(*lines[0].PetID, *lines[0].Quantity, ships[0], s.Now().UTC(), s.Currency, nil)
		if err := s.orders.submit(ctx, o, owner); err != nil {
			return nil, lineError(0, err)
		}
		return []*Order{o}, nil
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if maxOpenUnits > 0 {
		if err := tx.checkOpenUnits(ctx, owner.ShopperID, lines, maxOpenUnits); err != nil {
			return nil, err
		}
	}
	var bought *purchase
	if checkout != nil {
		if err := tx.insertCheckout(ctx, checkout); err != nil {
			return nil, err
		}
		bought = &purchase{checkoutID: &checkout.ID, customer: checkout.Customer()}
	}
	pets, err := tx.lockPets(ctx, lines)
	if err != nil {
		return nil, err
	}
	orders := make([]*Order, len(lines))
	for i, in := range lines {
		o := newOrder(*in.PetID, *in.Quantity, ships[i], tx.now, s.Currency, bought)
		if err := tx.placeOrder(ctx, owner, pets[o.PetID], o); err != nil {
			return nil, lineError(i, err)
		}
		orders[i] = o
		if err := tx.audit(AuditOrderCreate, TargetID(auditTargetOrder, o.ID), diff(nil, o.auditFields())); err != nil {
			return nil, err
		}
	}
	return orders, tx.Commit()
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

// placeOrder places the new order o (its ID 0) on the pet p as lockPets
// locked it (nil: there is no such live pet), by the rule of takeOrder,
// and leaves p as the order left it for the next line. It records the
// events of placedEvents. Errors: validation_failed (no such pet),
// pet_not_available, insufficient_stock.
func (tx *Tx) placeOrder(ctx context.Context, owner Owner, p *Pet, o *Order) error {
	if p == nil {
		return errNoSuchPet(o.PetID)
	}
	if err := takeOrder(p, o); err != nil {
		return err
	}
	err := tx.get(ctx, &o.ID, `INSERT INTO orders (pet_id, quantity, ship_date, state, api_key_id, shopper_id, created_at, updated_at,
		unit_price, currency, checkout_id) VALUES ($1, $2, $3, 'open', $4, $5, $6, $6, $7, $8, $9) RETURNING id`,
		o.PetID, o.Quantity, o.ShipDate, owner.keyID(), owner.shopper(), tx.now, o.UnitPrice, o.Currency, o.CheckoutID)
	if err != nil {
		return fmt.Errorf("insert order: %w", err)
	}
	if err := tx.storeStock(ctx, p); err != nil {
		return err
	}
	events, err := placedEvents(p, o)
	if err != nil {
		return err
	}
	tx.events = append(tx.events, events...)
	return nil
}

// takeOrder is SPEC §5's rule for placing order o on the locked pet p, the
// one rule of every order path: the pet must be available, with at least
// the order's quantity in stock; its stock then drops by the quantity and
// its status follows from the stock left, the order being open
// (deriveStatus); the order keeps the pet's price as its unit price, a
// snapshot no later price change alters. Errors: pet_not_available,
// insufficient_stock, with p and o unchanged.
func takeOrder(p *Pet, o *Order) error {
	if p.Status != StatusAvailable {
		return Errorf(EPetNotAvailable, "Pet %d is %s.", p.ID, p.Status)
	}
	if p.Stock < o.Quantity {
		return Errorf(EInsufficientStock, "Only %d of pet %d in stock.", p.Stock, p.ID)
	}
	p.Stock -= o.Quantity
	p.Status = deriveStatus(p.Stock, 1)
	o.UnitPrice, o.Total = p.Price, p.Price.Times(o.Quantity)
	return nil
}

// placedEvents are the events of placing o on p, in their order: the pet's
// stock as the order left it, then the order, each as the API shows it.
func placedEvents(p *Pet, o *Order) ([]pendingEvent, error) {
	stock, err := newEvent(EventInventoryUpdated, p.Inventory())
	if err != nil {
		return nil, err
	}
	order, err := newEvent(EventOrderCreated, o)
	if err != nil {
		return nil, err
	}
	return []pendingEvent{stock, order}, nil
}

// errNoSuchPet refuses an order for a pet that does not exist (or was
// deleted): the line's petId is invalid.
func errNoSuchPet(id int64) error {
	return Invalid("petId", "pet %d does not exist", id)
}

// purchase is what a storefront checkout adds to each of its orders.
type purchase struct {
	checkoutID *int64
	customer   *Customer
}

// newOrder is a new open order in the store's currency, before the
// database gives it an id and its price is read from the locked pet.
func newOrder(petID, qty int64, ship *time.Time, now time.Time, currency string, bought *purchase) *Order {
	o := &Order{PetID: petID, Quantity: qty, ShipDate: ship, State: OrderOpen, CreatedAt: now, Currency: currency}
	if bought != nil {
		o.CheckoutID, o.Customer = bought.checkoutID, bought.customer
	}
	return o
}

// keyID and shopper are the owner columns of an order: the shopper when
// there is one, else the API key when there is one.
func (o Owner) keyID() *int64 {
	if o.ShopperID == "" && o.APIKeyID > 0 {
		return &o.APIKeyID
	}
	return nil
}

func (o Owner) shopper() *string {
	if o.ShopperID != "" {
		return &o.ShopperID
	}
	return nil
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
