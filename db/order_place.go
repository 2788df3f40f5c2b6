package db

import (
	"context"
	"fmt"
	"time"
)

// Orders are placed through two doors, each its own transaction: PlaceOrder
// (one order, in the next batch of the group commit: order_batch.go) and
// PlaceCheckout (a storefront cart, all lines or none: checkout_place.go).
// Both place each order by the one rule, takeOrder, on its pet as the
// transaction locked it, and record its events with placed. In Go that is
// tx.placeOrder, the writes of one order; PostgreSQL places a batch's
// rounds by one statement each (order_place_postgres.go), which applies
// the same rule and leaves the events to placed.

// PlaceOrder places one order for owner, in the next batch of lone orders
// (group commit: one transaction for the orders that arrive together,
// each refused or placed alone by the rule). A staff key's order gets its
// audit entry in that transaction. Errors: validation_failed (also for a
// pet that does not exist), pet_not_available, insufficient_stock.
func (s *Store) PlaceOrder(ctx context.Context, owner Owner, in NewOrder) (*Order, error) {
	ship, err := in.Validate()
	if err != nil {
		return nil, err
	}
	o := newOrder(*in.PetID, *in.Quantity, ship, s.Now().UTC(), s.Currency, nil)
	if err := s.orders.submit(ctx, o, owner); err != nil {
		return nil, err
	}
	return o, nil
}

// placeOrder places the new order o (its ID 0) on the pet p as the
// transaction locked it (nil: there is no such live pet), by the rule of
// takeOrder: writes the order and the pet's stock, records the events
// (placed), and leaves p as the order left it for the next order on it.
// Errors: validation_failed (no such pet), pet_not_available,
// insufficient_stock, with nothing written.
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
	return tx.placed(p, o)
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

// placed records the events of placing o (written, with its id) on p (as
// the order left it), in their order: the pet's stock, then the order,
// each as the API shows it. The transaction writes them at commit.
func (tx *Tx) placed(p *Pet, o *Order) error {
	stock, err := newEvent(EventInventoryUpdated, p.Inventory())
	if err != nil {
		return err
	}
	order, err := newEvent(EventOrderCreated, o)
	if err != nil {
		return err
	}
	tx.events = append(tx.events, stock, order)
	return nil
}

// auditPlaced writes the audit entry of the placed order o with the
// origin ctx carries, none without one (a customer's order). ctx is the
// order's own: in a batch, the transaction's context is only the first
// order's.
func (tx *Tx) auditPlaced(ctx context.Context, o *Order) error {
	origin, ok := OriginFrom(ctx)
	if !ok {
		return nil
	}
	return tx.writeAudit(origin, AuditOrderCreate, TargetID(auditTargetOrder, o.ID), diff(nil, o.auditFields()))
}

// errNoSuchPet refuses an order for a pet that does not exist (or was
// deleted): the order's petId is invalid.
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
