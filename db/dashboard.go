package db

import (
	"context"
	"fmt"
	"strings"
)

// The dashboard is one read across the aggregates: pets by status, orders
// by state, keys live and revoked, and the bans in force.

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
	// RevenueToday is what the orders placed today (UTC) cost, cancelled
	// ones left out; OpenValue is what the open orders cost. Both count
	// orders in the store's currency (Currency) only.
	RevenueToday Money
	OpenValue    Money
	Currency     string
}

// CountDashboard reads the dashboard's counts.
func (s *Store) CountDashboard(ctx context.Context) (*Dashboard, error) {
	d := &Dashboard{Pets: map[string]int{StatusAvailable: 0, StatusPending: 0, StatusSold: 0}}
	var pets []struct {
		Status string `db:"status"`
		N      int    `db:"n"`
	}
	// pet_counts, kept by triggers (migration 00005), has a few rows per
	// category: the dashboard does not count every pet.
	if err := s.sel(ctx, &pets, `SELECT status, CAST(SUM(n) AS BIGINT) AS n FROM pet_counts GROUP BY status`); err != nil {
		return nil, fmt.Errorf("count pets: %w", err)
	}
	for _, p := range pets {
		d.Pets[p.Status] = p.N
	}
	if err := s.countOrders(ctx, d); err != nil {
		return nil, err
	}
	if err := s.sumRevenue(ctx, d); err != nil {
		return nil, err
	}
	var keys struct {
		Active  int `db:"active"`
		Revoked int `db:"revoked"`
	}
	err := s.get(ctx, &keys, `SELECT
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

// countOrders sets the dashboard's order counts and the open orders'
// value from order_counts, kept by triggers (migration 00014): a few rows
// per state and currency (on PostgreSQL, per slot), not every order.
func (s *Store) countOrders(ctx context.Context, d *Dashboard) error {
	var rows []struct {
		State    string `db:"state"`
		Currency string `db:"currency"`
		N        int    `db:"n"`
		Value    Money  `db:"value"`
	}
	if err := s.sel(ctx, &rows, `SELECT state, currency, CAST(SUM(n) AS BIGINT) AS n, CAST(SUM(value) AS BIGINT) AS value
		FROM order_counts GROUP BY state, currency`); err != nil {
		return fmt.Errorf("count orders: %w", err)
	}
	for _, r := range rows {
		switch r.State {
		case OrderOpen:
			d.OpenOrders += r.N
			if r.Currency == s.Currency {
				d.OpenValue += r.Value
			}
		case OrderComplete:
			d.CompleteOrders += r.N
		}
	}
	return nil
}

// sumRevenue sets the dashboard's takings today: the orders of today
// through the created_at index (orders_created).
func (s *Store) sumRevenue(ctx context.Context, d *Dashboard) error {
	d.Currency = s.Currency
	start := today(s.Now())
	err := s.get(ctx, &d.RevenueToday, `SELECT COALESCE(SUM(unit_price * quantity), 0) FROM orders
		WHERE created_at >= $1 AND created_at < $2 AND state <> 'cancelled' AND currency = $3`,
		start, start.AddDate(0, 0, 1), s.Currency)
	if err != nil {
		return fmt.Errorf("sum revenue: %w", err)
	}
	return nil
}
