package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Order states. The API shows open and complete orders; cancelled ones are
// kept for history and events only.
const (
	OrderOpen      = "open"
	OrderComplete  = "complete"
	OrderCancelled = "cancelled"
)

// Order is an order for one pet, as the API shows it.
type Order struct {
	ID        int64      `db:"id" json:"id"`
	PetID     int64      `db:"pet_id" json:"petId"`
	Quantity  int64      `db:"quantity" json:"quantity"`
	ShipDate  *time.Time `db:"ship_date" json:"shipDate,omitempty"`
	Complete  bool       `db:"complete" json:"complete"`
	State     string     `db:"state" json:"-"`
	CreatedAt time.Time  `db:"created_at" json:"-"`
}

// Owner says who places or may see orders: an API key, or a storefront
// shopper (a browser). Staff pass nil to see every order.
type Owner struct {
	APIKeyID  int64
	ShopperID string
}

// NewOrder is the body of POST /store/orders.
type NewOrder struct {
	PetID    *int64  `json:"petId"`
	Quantity *int64  `json:"quantity"`
	ShipDate *string `json:"shipDate"`
	Complete *bool   `json:"complete"`
	// Id is accepted (the seed's Order has it) but must be absent: the
	// service assigns ids.
	ID *int64 `json:"id"`
}

// Validate checks the fields and parses shipDate.
func (o *NewOrder) Validate() (*time.Time, error) {
	var p Problems
	switch {
	case o.PetID == nil:
		p.Add("petId", "is required")
	case *o.PetID < 1:
		p.Add("petId", "must be a positive integer")
	}
	switch {
	case o.Quantity == nil:
		p.Add("quantity", "is required")
	case *o.Quantity < 1 || *o.Quantity > MaxOrderQuantity:
		p.Add("quantity", "must be between 1 and %d", MaxOrderQuantity)
	}
	if o.Complete != nil && *o.Complete {
		p.Add("complete", "a new order cannot be complete")
	}
	if o.ID != nil {
		p.Add("id", "is assigned by the service")
	}
	ship, err := parseShipDate(o.ShipDate)
	if err != nil {
		p.Add("shipDate", "must be an RFC 3339 date-time")
	}
	return ship, p.Err()
}

func parseShipDate(s *string) (*time.Time, error) {
	if s == nil {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return nil, err
	}
	t = t.UTC()
	return &t, nil
}

// OrderUpdate is the body of PATCH /store/orders/{id}.
type OrderUpdate struct {
	Complete *bool   `json:"complete"`
	ShipDate *string `json:"shipDate"`
}

// OrderFilter selects orders.
type OrderFilter struct {
	Owner    *Owner // nil: all orders (staff)
	Complete *bool
	PetID    int64
	Page
}

const orderCols = `o.id, o.pet_id, o.quantity, o.ship_date, (o.state = 'complete') AS complete, o.state, o.created_at`

func ownerCond(w *where, o *Owner) {
	if o == nil {
		return
	}
	if o.ShopperID != "" {
		w.add("o.shopper_id = " + w.arg(o.ShopperID))
	} else {
		w.add("o.api_key_id = " + w.arg(o.APIKeyID))
	}
}

// visibleOrders adds the conditions every order list shares: cancelled
// orders are hidden; complete and petId filter when set.
func visibleOrders(w *where, complete *bool, petID int64) {
	w.add("o.state <> 'cancelled'")
	if complete != nil {
		if *complete {
			w.add("o.state = 'complete'")
		} else {
			w.add("o.state = 'open'")
		}
	}
	if petID > 0 {
		w.add("o.pet_id = " + w.arg(petID))
	}
}

// FindOrders lists open and complete orders by id.
func (s *Store) FindOrders(ctx context.Context, f OrderFilter) ([]*Order, bool, error) {
	var w where
	visibleOrders(&w, f.Complete, f.PetID)
	ownerCond(&w, f.Owner)
	tail := f.Page.clause(&w, "o.id")
	var os []*Order
	if err := s.sel(ctx, &os, `SELECT `+orderCols+` FROM orders o`+w.String()+tail, w.args...); err != nil {
		return nil, false, fmt.Errorf("find orders: %w", err)
	}
	os, more := trim(os, f.Page)
	return os, more, nil
}

// FindOrderByID returns an open or complete order the owner may see (nil
// owner: any). Errors: not_found.
func (s *Store) FindOrderByID(ctx context.Context, id int64, owner *Owner) (*Order, error) {
	return findOrder(ctx, s.get, id, owner, "")
}

// getter runs a query for one row: Store.get or Tx.get.
type getter func(ctx context.Context, dest any, query string, args ...any) error

func findOrder(ctx context.Context, g getter, id int64, owner *Owner, lock string) (*Order, error) {
	var w where
	w.add("o.id = " + w.arg(id))
	w.add("o.state <> 'cancelled'")
	ownerCond(&w, owner)
	var o Order
	err := g(ctx, &o, `SELECT `+orderCols+` FROM orders o`+w.String()+lock, w.args...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENotFound, "Order %d not found.", id)
	}
	if err != nil {
		return nil, fmt.Errorf("find order: %w", err)
	}
	return &o, nil
}

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
// failing line comes back as a *LineError wrapping the codes of PlaceOrder.
func (s *Store) PlaceOrders(ctx context.Context, owner Owner, lines []NewOrder) ([]*Order, error) {
	return s.placeOrders(ctx, owner, lines, 0)
}

// placeOrders is PlaceOrders with, when maxOpenUnits > 0, the cap of
// PlaceShopOrders on owner's open units.
func (s *Store) placeOrders(ctx context.Context, owner Owner, lines []NewOrder, maxOpenUnits int64) ([]*Order, error) {
	ships := make([]*time.Time, len(lines))
	for i := range lines {
		ship, err := lines[i].Validate()
		if err != nil {
			return nil, &LineError{Line: i, Err: err}
		}
		ships[i] = ship
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
	if err := tx.lockPets(ctx, lines); err != nil {
		return nil, err
	}
	orders := make([]*Order, len(lines))
	for i, in := range lines {
		o, err := tx.placeOrder(ctx, owner, *in.PetID, *in.Quantity, ships[i])
		if err != nil {
			var coded *Error
			if errors.As(err, &coded) {
				return nil, &LineError{Line: i, Err: err}
			}
			return nil, err
		}
		orders[i] = o
	}
	return orders, tx.Commit()
}

// lockPets locks every pet of a checkout in id order before any line
// writes. Locking line by line would deadlock on PostgreSQL: two carts naming
// the same pets in opposite orders, or a cart whose first line already holds
// the events lock while a restock of its second pet waits for that lock.
// A pet that does not exist is left for its line to report.
func (tx *Tx) lockPets(ctx context.Context, lines []NewOrder) error {
	if len(lines) < 2 {
		return nil
	}
	ids := make([]int64, 0, len(lines))
	for _, in := range lines {
		ids = append(ids, *in.PetID)
	}
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		if _, err := tx.lockPet(ctx, id); err != nil && ErrorCode(err) != ENotFound {
			return err
		}
	}
	return nil
}

func (tx *Tx) placeOrder(ctx context.Context, owner Owner, petID, qty int64, ship *time.Time) (*Order, error) {
	p, err := tx.lockPet(ctx, petID)
	if ErrorCode(err) == ENotFound {
		return nil, Invalid("petId", "pet %d does not exist", petID)
	}
	if err != nil {
		return nil, err
	}
	if p.Status != StatusAvailable {
		return nil, Errorf(EPetNotAvailable, "Pet %d is %s.", petID, p.Status)
	}
	if p.Stock < qty {
		return nil, Errorf(EInsufficientStock, "Only %d of pet %d in stock.", p.Stock, petID)
	}
	var keyID *int64
	var shopper *string
	if owner.ShopperID != "" {
		shopper = &owner.ShopperID
	} else if owner.APIKeyID > 0 {
		keyID = &owner.APIKeyID
	}
	o := &Order{PetID: petID, Quantity: qty, ShipDate: ship, State: OrderOpen, CreatedAt: tx.now}
	err = tx.get(ctx, &o.ID, `INSERT INTO orders (pet_id, quantity, ship_date, state, api_key_id, shopper_id, created_at, updated_at)
		VALUES ($1, $2, $3, 'open', $4, $5, $6, $6) RETURNING id`, petID, qty, ship, keyID, shopper, tx.now)
	if err != nil {
		return nil, fmt.Errorf("insert order: %w", err)
	}
	p.Stock -= qty
	p.Status = deriveStatus(p.Stock, 1)
	if err := tx.writeStock(ctx, p); err != nil {
		return nil, err
	}
	if err := tx.addEvent(ctx, EventOrderCreated, o); err != nil {
		return nil, err
	}
	return o, nil
}

// UpdateOrder completes an order and/or sets its ship date. Completing
// sells the pet when its stock is 0 and no other order is open.
// Errors: validation_failed, not_found, order_complete.
func (s *Store) UpdateOrder(ctx context.Context, id int64, u OrderUpdate) (*Order, error) {
	var p Problems
	if u.Complete == nil && u.ShipDate == nil {
		p.Add("complete", "give complete and/or shipDate")
	}
	ship, err := parseShipDate(u.ShipDate)
	if err != nil {
		p.Add("shipDate", "must be an RFC 3339 date-time")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	o, err := tx.lockOrder(ctx, id, nil)
	if err != nil {
		return nil, err
	}
	if u.Complete != nil && !*u.Complete && o.Complete {
		return nil, Errorf(EOrderComplete, "Order %d is complete and cannot be reopened.", id)
	}
	completing := u.Complete != nil && *u.Complete && !o.Complete
	if ship != nil {
		o.ShipDate = ship
	}
	if completing {
		o.Complete, o.State = true, OrderComplete
	}
	if _, err := tx.exec(ctx, `UPDATE orders SET ship_date = $1, state = $2, updated_at = $3 WHERE id = $4`,
		o.ShipDate, o.State, tx.now, id); err != nil {
		return nil, fmt.Errorf("update order: %w", err)
	}
	event := EventOrderUpdated
	if completing {
		event = EventOrderCompleted
		if err := tx.settleAfterComplete(ctx, o.PetID); err != nil {
			return nil, err
		}
	}
	if err := tx.addEvent(ctx, event, o); err != nil {
		return nil, err
	}
	return o, tx.Commit()
}

// settleAfterComplete re-derives the pet's status once one of its orders
// is complete: stock 0 and no other open order makes it sold. A deleted pet
// has nothing to settle.
func (tx *Tx) settleAfterComplete(ctx context.Context, petID int64) error {
	pet, err := tx.lockPet(ctx, petID)
	if ErrorCode(err) == ENotFound {
		return nil
	}
	if err != nil {
		return err
	}
	open, err := tx.openOrders(ctx, petID)
	if err != nil {
		return err
	}
	if status := deriveStatus(pet.Stock, open); status != pet.Status {
		pet.Status = status
		return tx.writeStock(ctx, pet)
	}
	return nil
}

// CancelOrder cancels an open order the owner may see (nil: any) and puts
// its quantity back in stock. Errors: not_found, order_complete.
func (s *Store) CancelOrder(ctx context.Context, id int64, owner *Owner) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	o, err := tx.lockOrder(ctx, id, owner)
	if err != nil {
		return err
	}
	if o.Complete {
		return Errorf(EOrderComplete, "Order %d is complete and cannot be cancelled.", id)
	}
	if _, err := tx.exec(ctx, `UPDATE orders SET state = 'cancelled', updated_at = $1 WHERE id = $2`, tx.now, id); err != nil {
		return fmt.Errorf("cancel order: %w", err)
	}
	pet, err := tx.lockPet(ctx, o.PetID)
	switch {
	case err == nil:
		pet.Stock += o.Quantity
		pet.Status = StatusAvailable
		if err := tx.writeStock(ctx, pet); err != nil {
			return err
		}
	case ErrorCode(err) != ENotFound:
		return err
	}
	o.State = OrderCancelled
	if err := tx.addEvent(ctx, EventOrderCancelled, o); err != nil {
		return err
	}
	return tx.Commit()
}

// lockOrder reads an order for update. The pet is locked after the order;
// every path that locks both takes them in this order or only the pet.
func (tx *Tx) lockOrder(ctx context.Context, id int64, owner *Owner) (*Order, error) {
	lock := ""
	if tx.dialect() == DialectPostgres {
		lock = " FOR UPDATE"
	}
	return findOrder(ctx, tx.get, id, owner, lock)
}
