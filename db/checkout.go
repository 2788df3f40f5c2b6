package db

import (
	"context"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"
)

// Customer is who bought a storefront checkout, as staff see it on its
// orders (SPEC §14). Phone is optional.
type Customer struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Phone string `json:"phone,omitempty"`
}

// Checkout field limits of SPEC §14.
const (
	MaxEmailLen = 254
	MaxPhoneLen = 30
	// MaxShipAheadDays is how far ahead a preferred date may be.
	MaxShipAheadDays = 90
)

// NewCheckout is what the storefront's checkout form asks: the buyer's
// contact details and an optional preferred date (YYYY-MM-DD), which
// becomes every order's shipDate at 00:00 UTC.
type NewCheckout struct {
	Name          string
	Email         string
	Phone         string
	PreferredDate string
}

// Validate trims and checks the form against today (the store's date,
// UTC) and returns the ship date ("" date: nil). Problems name the
// fields name, email, phone and date.
func (c *NewCheckout) Validate(today time.Time) (*time.Time, error) {
	var p Problems
	checkName(&p, "name", &c.Name)
	c.Email = strings.TrimSpace(c.Email)
	if why := emailProblem(c.Email); why != "" {
		p.Add("email", "%s", why)
	}
	c.Phone = strings.TrimSpace(c.Phone)
	if why := phoneProblem(c.Phone); why != "" {
		p.Add("phone", "%s", why)
	}
	c.PreferredDate = strings.TrimSpace(c.PreferredDate)
	var ship *time.Time
	if c.PreferredDate != "" {
		d, err := time.Parse(time.DateOnly, c.PreferredDate)
		last := today.AddDate(0, 0, MaxShipAheadDays)
		switch {
		case err != nil:
			p.Add("date", "must be a date as YYYY-MM-DD")
		case d.Before(today):
			p.Add("date", "must be today or later")
		case d.After(last):
			p.Add("date", "must be within %d days, by %s", MaxShipAheadDays, last.Format(time.DateOnly))
		default:
			ship = &d
		}
	}
	return ship, p.Err()
}

// emailProblem says why s is not an email address to reach a buyer at,
// "" when it is: a bare address (no display name) with a domain that
// has a dot, at most 254 characters.
func emailProblem(s string) string {
	if s == "" {
		return "is required"
	}
	if utf8.RuneCountInString(s) > MaxEmailLen || hasControl(s) {
		return fmt.Sprintf("must be an email address of at most %d characters", MaxEmailLen)
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return "must be an email address, like name@example.com"
	}
	_, domain, _ := strings.Cut(s, "@")
	if !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") {
		return "must be an email address, like name@example.com"
	}
	return ""
}

// phoneProblem says why s is not a phone number, "" when it is one or
// empty (the phone is optional): digits, spaces and + - ( ), at most 30,
// with at least one digit.
func phoneProblem(s string) string {
	if s == "" {
		return ""
	}
	digits := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case strings.ContainsRune(" +-()", r):
		default:
			return "may hold only digits, spaces and + - ( )"
		}
	}
	switch {
	case len(s) > MaxPhoneLen:
		return fmt.Sprintf("must be at most %d characters", MaxPhoneLen)
	case digits == 0:
		return "must have digits"
	}
	return ""
}

// Checkout is one storefront checkout: its number (ID) is the order
// number a shopper uses to find it again.
type Checkout struct {
	ID        int64     `db:"id"`
	ShopperID string    `db:"shopper_id"`
	Name      string    `db:"name"`
	Email     string    `db:"email"`
	Phone     string    `db:"phone"`
	CreatedAt time.Time `db:"created_at"`
	// Orders are the checkout's orders that are open or complete.
	Orders []*Order `db:"-"`
}

// Customer is the checkout's buyer.
func (c *Checkout) Customer() *Customer {
	return &Customer{Name: c.Name, Email: c.Email, Phone: c.Phone}
}

// Total is what the checkout's orders cost together.
func (c *Checkout) Total() Money {
	var t Money
	for _, o := range c.Orders {
		t += o.Total
	}
	return t
}

// foldEmail is the key a lookup compares addresses by: the whole address
// lower-cased (mailbox names are case-sensitive in theory, never in
// practice, and a shopper should not have to remember the case typed).
func foldEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// errCheckoutNotFound is the one answer of FindCheckout to any pair that
// does not match, so it tells nobody which order numbers exist.
var errCheckoutNotFound = Errorf(ENotFound, "No order matches that order number and email address.")

// FindCheckout returns the checkout numbered id when email is the address
// it was placed with (any case), with its open and complete orders.
// Errors: not_found, the same for a wrong email and a number that does not
// exist (SPEC §14).
func (s *Store) FindCheckout(ctx context.Context, id int64, email string) (*Checkout, error) {
	email = foldEmail(email)
	// What is not an address no checkout has; asking would only make
	// PostgreSQL refuse text it cannot hold (NUL, bytes that are not UTF-8).
	if id < 1 || emailProblem(email) != "" {
		return nil, errCheckoutNotFound
	}
	return s.findCheckout(ctx, errCheckoutNotFound, `id = $1 AND email_key = $2`, id, email)
}

// FindCheckoutByID returns the checkout numbered id with its open and
// complete orders, whoever placed it: the storefront shows it only to the
// browser that placed it (ShopperID) or that proved its number and email
// in this session, and checks that itself. Errors: not_found.
func (s *Store) FindCheckoutByID(ctx context.Context, id int64) (*Checkout, error) {
	notFound := Errorf(ENotFound, "No order has the number %d.", id)
	if id < 1 {
		return nil, notFound
	}
	return s.findCheckout(ctx, notFound, `id = $1`, id)
}

// findCheckout reads the one checkout cond selects, with its open and
// complete orders; none is notFound.
func (s *Store) findCheckout(ctx context.Context, notFound error, cond string, args ...any) (*Checkout, error) {
	c, err := findOne[Checkout](ctx, s.get, "checkout", notFound,
		`SELECT id, shopper_id, name, email, COALESCE(phone, '') AS phone, created_at FROM checkouts WHERE `+cond, args...)
	if err != nil {
		return nil, err
	}
	if c.Orders, err = s.findCheckoutOrders(ctx, c.ID); err != nil {
		return nil, err
	}
	return c, nil
}

// findCheckoutOrders lists a checkout's open and complete orders by id.
func (s *Store) findCheckoutOrders(ctx context.Context, checkoutID int64) ([]*Order, error) {
	var w where
	visibleOrders(&w, nil, 0)
	ownerCond(&w, &Owner{CheckoutID: checkoutID})
	var orders []*Order
	if err := s.sel(ctx, &orders, `SELECT `+orderCols+orderFrom+w.String()+` ORDER BY o.id`, w.args...); err != nil {
		return nil, fmt.Errorf("find checkout orders: %w", err)
	}
	for _, o := range orders {
		scanned(o)
	}
	return orders, nil
}
