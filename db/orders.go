package db

import (
	"context"
	"database/sql"
	"time"
)

// Order states. The API shows open and complete orders; cancelled ones are
// kept for history and events only.
const (
	OrderOpen      = "open"
	OrderComplete  = "complete"
	OrderCancelled = "cancelled"
)

// Order is an order for one pet, as the API shows it. UnitPrice, Total and
// Currency are a snapshot taken when it was placed (SPEC §14): a later
// price change never alters them.
type Order struct {
	ID       int64      `db:"id" json:"id"`
	PetID    int64      `db:"pet_id" json:"petId"`
	Quantity int64      `db:"quantity" json:"quantity"`
	ShipDate *time.Time `db:"ship_date" json:"shipDate,omitempty"`
	Complete bool       `db:"complete" json:"complete"`
	// Customer is the buyer of a storefront order; nil for the API's.
	// Only staff see storefront orders through the API.
	Customer  *Customer `db:"-" json:"customer,omitempty"`
	UnitPrice Money     `db:"unit_price" json:"unitPrice"`
	Total     Money     `db:"total" json:"total"`
	Currency  string    `db:"currency" json:"currency,omitempty"`

	State     string    `db:"state" json:"-"`
	CreatedAt time.Time `db:"created_at" json:"-"`
	// CheckoutID is the storefront checkout the order was placed in.
	CheckoutID *int64 `db:"checkout_id" json:"-"`
	// BuyerName, BuyerEmail and BuyerPhone are the checkout's columns of
	// the order's row, NULL for an order placed through the API; Customer
	// is made of them.
	BuyerName  sql.NullString `db:"buyer_name" json:"-"`
	BuyerEmail sql.NullString `db:"buyer_email" json:"-"`
	BuyerPhone sql.NullString `db:"buyer_phone" json:"-"`
}

// afterScan sets Customer from the buyer's columns.
func (o *Order) afterScan() {
	if !o.BuyerName.Valid {
		return
	}
	o.Customer = &Customer{Name: o.BuyerName.String, Email: o.BuyerEmail.String, Phone: o.BuyerPhone.String}
}

// Owner says who places or may see orders: an API key, or a storefront
// shopper (a browser), or whoever proved a checkout's number and email
// (SPEC §14's order lookup, CheckoutID). Staff pass nil to see every order.
type Owner struct {
	APIKeyID  int64
	ShopperID string
	// CheckoutID, when set, lets the owner see and cancel that checkout's
	// orders, and only those; it is never used to place orders.
	CheckoutID int64
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

// orderCols read an Order from orderFrom. The buyer's fields are looked
// up in the order's checkout by its primary key, one lookup per field, for
// the rows a page returns (PostgreSQL evaluates them after its sort and
// limit): joined instead, checkouts could be hashed whole for a page of
// orders, as the planner did for a shopper's one order beside 6,000
// checkouts (issue 30).
const orderCols = `o.id, o.pet_id, o.quantity, o.ship_date, (o.state = 'complete') AS complete, o.state, o.created_at,
	o.unit_price, o.unit_price * o.quantity AS total, COALESCE(o.currency, '') AS currency, o.checkout_id,
	(SELECT ck.name FROM checkouts ck WHERE ck.id = o.checkout_id) AS buyer_name,
	(SELECT ck.email FROM checkouts ck WHERE ck.id = o.checkout_id) AS buyer_email,
	(SELECT ck.phone FROM checkouts ck WHERE ck.id = o.checkout_id) AS buyer_phone`
const orderFrom = ` FROM orders o`

func ownerCond(w *where, o *Owner) {
	if o == nil {
		return
	}
	switch {
	case o.CheckoutID > 0:
		w.add("o.checkout_id = " + w.arg(o.CheckoutID))
	case o.ShopperID != "":
		w.add("o.shopper_id = " + w.arg(o.ShopperID))
	default:
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
	return selectPage[*Order](ctx, s, "orders", f.Page, `SELECT `+orderCols+orderFrom+w.String()+tail, w.args...)
}

// FindOrderByID returns an open or complete order the owner may see (nil
// owner: any). Errors: not_found.
func (s *Store) FindOrderByID(ctx context.Context, id int64, owner *Owner) (*Order, error) {
	return findOrder(ctx, s.get, id, owner, "")
}

func findOrder(ctx context.Context, g getter, id int64, owner *Owner, lock string) (*Order, error) {
	var w where
	w.add("o.id = " + w.arg(id))
	w.add("o.state <> 'cancelled'")
	ownerCond(&w, owner)
	return findOne[Order](ctx, g, "order", notFound("Order", id), `SELECT `+orderCols+orderFrom+w.String()+lock, w.args...)
}

// ConsoleOrder is an order as the console lists it: with its pet's name
// and who placed it.
type ConsoleOrder struct {
	Order
	PetName    string `db:"pet_name"`
	PetDeleted bool   `db:"pet_deleted"`
	// KeyName names the API key that placed the order; empty for the
	// storefront.
	KeyName string `db:"key_name"`
	// Shop is true for orders placed in the storefront.
	Shop bool `db:"shop"`
}

// consoleOrderCols and consoleOrderFrom read a ConsoleOrder.
const consoleOrderCols = orderCols + `, p.name AS pet_name, (p.deleted_at IS NOT NULL) AS pet_deleted,
	COALESCE(k.name, '') AS key_name, (o.shopper_id IS NOT NULL) AS shop`
const consoleOrderFrom = orderFrom + ` JOIN pets p ON p.id = o.pet_id LEFT JOIN api_keys k ON k.id = o.api_key_id`

// ConsoleOrderFilter selects orders for the console. Zero fields do not
// filter.
type ConsoleOrderFilter struct {
	Complete *bool
	PetID    int64
	// Search finds orders by their number, the buyer's name, email or
	// phone (a prefix of each, case aside; SPEC §10).
	Search string
	// BeforeID pages backwards: only orders with a smaller id.
	BeforeID int64
	Limit    int
}

// FindConsoleOrders lists open and complete orders, newest first, and
// returns the BeforeID of the next page, 0 when no older ones follow. A search runs unprepared on
// PostgreSQL: its plan depends on its values (listSelector).
// Errors: validation_failed (a search text that cannot be one, field q).
func (s *Store) FindConsoleOrders(ctx context.Context, f ConsoleOrderFilter) ([]*ConsoleOrder, int64, error) {
	if why := searchProblem(f.Search); why != "" {
		var p Problems
		p.Add("q", "%s", why)
		return nil, 0, p.Err()
	}
	if search := parseOrderSearch(f.Search); search != nil {
		return s.findSearchedOrders(ctx, f, search)
	}
	var w where
	visibleOrders(&w, f.Complete, f.PetID)
	page := Page{AfterID: f.BeforeID, Limit: f.Limit}
	tail := page.newestFirst(&w, "o.id")
	rows, more, err := selectPage[*ConsoleOrder](ctx, s, "console orders", page, `SELECT `+consoleOrderCols+consoleOrderFrom+w.String()+tail, w.args...)
	return rows, nextOrder(rows, more), err
}

// FindConsoleOrder returns one open or complete order as the console shows
// it. Errors: not_found.
func (s *Store) FindConsoleOrder(ctx context.Context, id int64) (*ConsoleOrder, error) {
	return findOne[ConsoleOrder](ctx, s.get, "console order", notFound("Order", id),
		`SELECT `+consoleOrderCols+consoleOrderFrom+` WHERE o.id = $1 AND o.state <> 'cancelled'`, id)
}
