package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Queries of the staff console that the API has no use for: the
// dashboard's counts, the low-stock list, and orders newest first with the
// names a person needs to read them.

// Dashboard holds the console's overview counts.
type Dashboard struct {
	// Pets counts live pets by status (available, pending, sold).
	Pets           map[string]int
	OpenOrders     int
	CompleteOrders int
	ActiveKeys     int
	RevokedKeys    int
	// ActiveBans counts subjects banned now: keys and anonymous IPs.
	ActiveBans int
	// BannedKeys counts the keys among them.
	BannedKeys int
}

// CountDashboard reads the dashboard's counts.
func (s *Store) CountDashboard(ctx context.Context) (*Dashboard, error) {
	d := &Dashboard{Pets: map[string]int{StatusAvailable: 0, StatusPending: 0, StatusSold: 0}}
	var pets []struct {
		Status string `db:"status"`
		N      int    `db:"n"`
	}
	if err := s.sel(ctx, &pets, `SELECT status, count(*) AS n FROM pets WHERE deleted_at IS NULL GROUP BY status`); err != nil {
		return nil, fmt.Errorf("count pets: %w", err)
	}
	for _, p := range pets {
		d.Pets[p.Status] = p.N
	}
	var orders struct {
		Open     int `db:"open"`
		Complete int `db:"complete"`
	}
	err := s.get(ctx, &orders, `SELECT
		COALESCE(SUM(CASE WHEN state = 'open' THEN 1 ELSE 0 END), 0) AS open,
		COALESCE(SUM(CASE WHEN state = 'complete' THEN 1 ELSE 0 END), 0) AS complete
		FROM orders`)
	if err != nil {
		return nil, fmt.Errorf("count orders: %w", err)
	}
	d.OpenOrders, d.CompleteOrders = orders.Open, orders.Complete
	var keys struct {
		Active  int `db:"active"`
		Revoked int `db:"revoked"`
	}
	err = s.get(ctx, &keys, `SELECT
		COALESCE(SUM(CASE WHEN revoked_at IS NULL THEN 1 ELSE 0 END), 0) AS active,
		COALESCE(SUM(CASE WHEN revoked_at IS NULL THEN 0 ELSE 1 END), 0) AS revoked
		FROM api_keys`)
	if err != nil {
		return nil, fmt.Errorf("count keys: %w", err)
	}
	d.ActiveKeys, d.RevokedKeys = keys.Active, keys.Revoked
	bans, err := s.ActiveBans(ctx)
	if err != nil {
		return nil, err
	}
	d.ActiveBans = len(bans)
	for subject := range bans {
		if strings.HasPrefix(subject, "key:") {
			d.BannedKeys++
		}
	}
	return d, nil
}

// FindLowStock lists available pets with at most maxStock in stock, the
// scarcest first, at most limit of them.
func (s *Store) FindLowStock(ctx context.Context, maxStock int64, limit int) ([]*Pet, error) {
	var pets []*Pet
	err := s.sel(ctx, &pets, `SELECT `+petCols+petFrom+`
		WHERE p.deleted_at IS NULL AND p.status = 'available' AND i.quantity <= $1
		ORDER BY i.quantity, p.id LIMIT $2`, maxStock, limit)
	if err != nil {
		return nil, fmt.Errorf("find low stock: %w", err)
	}
	return pets, nil
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

// ConsoleOrderFilter selects orders for the console. Zero fields do not
// filter.
type ConsoleOrderFilter struct {
	Complete *bool
	PetID    int64
	// BeforeID pages backwards: only orders with a smaller id.
	BeforeID int64
	Limit    int
}

// FindConsoleOrders lists open and complete orders, newest first, and
// reports whether older ones follow.
func (s *Store) FindConsoleOrders(ctx context.Context, f ConsoleOrderFilter) ([]*ConsoleOrder, bool, error) {
	var w where
	visibleOrders(&w, f.Complete, f.PetID)
	if f.BeforeID > 0 {
		w.add("o.id < " + w.arg(f.BeforeID))
	}
	limit := Page{Limit: f.Limit}.limit()
	q := `SELECT ` + orderCols + `, p.name AS pet_name, (p.deleted_at IS NOT NULL) AS pet_deleted,
		COALESCE(k.name, '') AS key_name, (o.shopper_id IS NOT NULL) AS shop
		FROM orders o JOIN pets p ON p.id = o.pet_id LEFT JOIN api_keys k ON k.id = o.api_key_id` +
		w.String() + ` ORDER BY o.id DESC LIMIT ` + strconv.Itoa(limit+1)
	var os []*ConsoleOrder
	if err := s.sel(ctx, &os, q, w.args...); err != nil {
		return nil, false, fmt.Errorf("find console orders: %w", err)
	}
	if len(os) > limit {
		return os[:limit], true, nil
	}
	return os, false, nil
}

// FindConsoleOrder returns one open or complete order as the console shows
// it. Errors: not_found.
func (s *Store) FindConsoleOrder(ctx context.Context, id int64) (*ConsoleOrder, error) {
	var o ConsoleOrder
	err := s.get(ctx, &o, `SELECT `+orderCols+`, p.name AS pet_name, (p.deleted_at IS NOT NULL) AS pet_deleted,
		COALESCE(k.name, '') AS key_name, (o.shopper_id IS NOT NULL) AS shop
		FROM orders o JOIN pets p ON p.id = o.pet_id LEFT JOIN api_keys k ON k.id = o.api_key_id
		WHERE o.id = $1 AND o.state <> 'cancelled'`, id)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, Errorf(ENotFound, "Order %d not found.", id)
		}
		return nil, fmt.Errorf("find console order: %w", err)
	}
	return &o, nil
}

// CountPetsByCategory counts the live pets of every category that has any.
func (s *Store) CountPetsByCategory(ctx context.Context) (map[int64]int, error) {
	var rows []struct {
		CategoryID int64 `db:"category_id"`
		N          int   `db:"n"`
	}
	if err := s.sel(ctx, &rows, `SELECT category_id, count(*) AS n FROM pets WHERE deleted_at IS NULL GROUP BY category_id`); err != nil {
		return nil, fmt.Errorf("count pets by category: %w", err)
	}
	m := make(map[int64]int, len(rows))
	for _, r := range rows {
		m[r.CategoryID] = r.N
	}
	return m, nil
}
