package db_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// wantOrderCountsMatchScan checks the dashboard's order counts and open
// value, which it reads from order_counts (migration 00014), against
// counting every order.
func wantOrderCountsMatchScan(tb testing.TB, ctx context.Context, s *db.Store) {
	tb.Helper()
	var scan struct {
		Open      int      `db:"open"`
		Complete  int      `db:"complete"`
		OpenValue db.Money `db:"open_value"`
	}
	if err := s.DB().GetContext(ctx, &scan, `SELECT
		COALESCE(SUM(CASE WHEN state = 'open' THEN 1 ELSE 0 END), 0) AS open,
		COALESCE(SUM(CASE WHEN state = 'complete' THEN 1 ELSE 0 END), 0) AS complete,
		COALESCE(SUM(CASE WHEN state = 'open' AND currency = $1 THEN unit_price * quantity ELSE 0 END), 0) AS open_value
		FROM orders`, s.Currency); err != nil {
		tb.Fatal(err)
	}
	d, err := s.CountDashboard(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if d.OpenOrders != scan.Open || d.CompleteOrders != scan.Complete || d.OpenValue != scan.OpenValue {
		tb.Errorf("dashboard: %d open, %d complete, open value %v; counting every order: %d, %d and %v",
			d.OpenOrders, d.CompleteOrders, d.OpenValue, scan.Open, scan.Complete, scan.OpenValue)
	}
}

// TestOrderCountsFollowEveryWrite: the dashboard's order counts stay
// those of a full count through orders placed alone and by checkout,
// completed, cancelled, given a ship date, written and deleted by hand,
// given the store's currency at a start, and a rolled-back write.
func TestOrderCountsFollowEveryWrite(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		rex, err := s.CreatePet(ctx, db.NewPet{Name: ptr("Rex"), CategoryID: &c.ID, Price: ptr("12.50")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetInventory(ctx, rex.ID, db.InventoryUpdate{Quantity: ptr(int64(100))}); err != nil {
			t.Fatal(err)
		}
		wantOrderCountsMatchScan(t, ctx, s)

		first := mustOrder(t, ctx, s, db.Owner{ShopperID: "s1"}, rex.ID, 2)
		second := mustOrder(t, ctx, s, db.Owner{ShopperID: "s1"}, rex.ID, 3)
		ck, err := s.PlaceCheckout(ctx, "s2", 100, db.NewCheckout{Name: "Ada", Email: "ada@example.com"},
			[]db.NewOrder{{PetID: &rex.ID, Quantity: ptr(int64(1))}, {PetID: &rex.ID, Quantity: ptr(int64(4))}})
		if err != nil {
			t.Fatal(err)
		}
		wantOrderCountsMatchScan(t, ctx, s)
		if _, err := s.UpdateOrder(ctx, first.ID, db.OrderUpdate{Complete: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		if err := s.CancelOrder(ctx, second.ID, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateOrder(ctx, ck.Orders[0].ID, db.OrderUpdate{ShipDate: ptr("2031-01-02T10:00:00Z")}); err != nil {
			t.Fatal(err)
		}
		wantOrderCountsMatchScan(t, ctx, s)

		// Written by hand, without a currency, then adopted at a start.
		var byHand int64
		if err := s.DB().GetContext(ctx, &byHand, `INSERT INTO orders (pet_id, quantity, state, unit_price, created_at, updated_at)
			VALUES ($1, 2, 'open', 700, $2, $2) RETURNING id`, rex.ID, s.Now()); err != nil {
			t.Fatal(err)
		}
		wantOrderCountsMatchScan(t, ctx, s)
		if err := s.AdoptCurrency(ctx); err != nil {
			t.Fatal(err)
		}
		wantOrderCountsMatchScan(t, ctx, s)
		if d, _ := s.CountDashboard(ctx); d.OpenOrders != 3 || d.CompleteOrders != 1 || d.OpenValue != 1250+5000+1400 {
			t.Errorf("dashboard = %d open, %d complete, open value %v; want 3, 1 and 76.50", d.OpenOrders, d.CompleteOrders, d.OpenValue)
		}

		tx, err := s.DB().BeginTxx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE orders SET state = 'complete'`); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		wantOrderCountsMatchScan(t, ctx, s)
		if _, err := s.DB().ExecContext(ctx, `DELETE FROM orders WHERE id = $1`, byHand); err != nil {
			t.Fatal(err)
		}
		wantOrderCountsMatchScan(t, ctx, s)
	})
}

// TestOrderCountsUnderConcurrentOrders: orders placed, completed and
// cancelled from many goroutines at once leave the counts exact (on
// PostgreSQL each transaction writes the rows of its own slot).
func TestOrderCountsUnderConcurrentOrders(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		c := MustCreateCategory(t, ctx, s, "Dogs")
		pets := make([]*db.Pet, 4)
		for i := range pets {
			pets[i] = MustCreatePet(t, ctx, s, c.ID, "Pet "+strconv.Itoa(i), 10_000)
		}
		var wg sync.WaitGroup
		for w := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 20 {
					o, err := s.PlaceOrder(ctx, db.Owner{ShopperID: "s" + strconv.Itoa(w)},
						db.NewOrder{PetID: &pets[(w+i)%len(pets)].ID, Quantity: ptr(int64(1 + i%3))})
					if err != nil {
						t.Error(err)
						return
					}
					switch i % 4 {
					case 1:
						_, err = s.UpdateOrder(ctx, o.ID, db.OrderUpdate{Complete: ptr(true)})
					case 2:
						err = s.CancelOrder(ctx, o.ID, nil)
					}
					if err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		wantOrderCountsMatchScan(t, ctx, s)
	})
}
