package db_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

func ptr[T any](v T) *T { return &v }

// MustCreateCategory adds a category or fails the test.
func MustCreateCategory(tb testing.TB, ctx context.Context, s *db.Store, name string) *db.Category {
	tb.Helper()
	c, err := s.CreateCategory(ctx, db.NewCategory{Name: &name})
	if err != nil {
		tb.Fatalf("create category %q: %v", name, err)
	}
	return c
}

// MustCreatePet adds a pet with the given stock or fails the test.
func MustCreatePet(tb testing.TB, ctx context.Context, s *db.Store, catID int64, name string, stock int64) *db.Pet {
	tb.Helper()
	p, err := s.CreatePet(ctx, db.NewPet{Name: &name, CategoryID: &catID})
	if err != nil {
		tb.Fatalf("create pet %q: %v", name, err)
	}
	if stock != 1 {
		if _, err := s.SetInventory(ctx, p.ID, db.InventoryUpdate{Quantity: &stock}); err != nil {
			tb.Fatalf("set stock of %q: %v", name, err)
		}
	}
	p, err = s.FindPetByID(ctx, p.ID)
	if err != nil {
		tb.Fatalf("find pet: %v", err)
	}
	return p
}

// storeWithPet opens a fresh store with one pet, Rex the dog, of the given
// stock.
func storeWithPet(t *testing.T, open dbtest.Open, stock int64) (*db.Store, *db.Pet) {
	t.Helper()
	ctx := context.Background()
	s := open(t)
	c := MustCreateCategory(t, ctx, s, "Dogs")
	return s, MustCreatePet(t, ctx, s, c.ID, "Rex", stock)
}

func mustOrder(tb testing.TB, ctx context.Context, s *db.Store, owner db.Owner, petID, qty int64) *db.Order {
	tb.Helper()
	o, err := s.PlaceOrder(ctx, owner, db.NewOrder{PetID: &petID, Quantity: &qty})
	if err != nil {
		tb.Fatalf("place order: %v", err)
	}
	return o
}

func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := db.ErrorCode(err); got != code {
		tb.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

// petState reads a pet's status and stock.
func petState(tb testing.TB, ctx context.Context, s *db.Store, id int64) (string, int64) {
	tb.Helper()
	it, err := s.FindInventoryItem(ctx, id)
	if err != nil {
		tb.Fatalf("inventory of %d: %v", id, err)
	}
	p, err := s.FindPetByID(ctx, id)
	if err != nil {
		tb.Fatalf("pet %d: %v", id, err)
	}
	if p.Status != it.Status || p.Stock != it.Quantity {
		tb.Fatalf("pet and inventory disagree: %+v vs %+v", p, it)
	}
	return it.Status, it.Quantity
}

func wantState(tb testing.TB, ctx context.Context, s *db.Store, id int64, status string, stock int64) {
	tb.Helper()
	gotStatus, gotStock := petState(tb, ctx, s, id)
	if gotStatus != status || gotStock != stock {
		tb.Fatalf("pet %d: got %s/%d, want %s/%d", id, gotStatus, gotStock, status, stock)
	}
}

var _ dbtest.Open = dbtest.SQLite

// countOpenOrders counts a pet's open orders straight from the table, so the
// invariant check does not trust the store's own queries.
func countOpenOrders(tb testing.TB, ctx context.Context, s *db.Store, petID int64) int {
	tb.Helper()
	var n int
	if err := s.DB().GetContext(ctx, &n, `SELECT count(*) FROM orders WHERE pet_id = $1 AND state = 'open'`, petID); err != nil {
		tb.Fatalf("count open orders of %d: %v", petID, err)
	}
	return n
}

// derivedStatus is SPEC §5's invariant written out independently of the store.
func derivedStatus(stock int64, open int) string {
	switch {
	case stock > 0:
		return db.StatusAvailable
	case open > 0:
		return db.StatusPending
	default:
		return db.StatusSold
	}
}

// wantInvariant fails when a pet's status contradicts its stock and open orders.
func wantInvariant(tb testing.TB, ctx context.Context, s *db.Store, petID int64) {
	tb.Helper()
	status, stock := petState(tb, ctx, s, petID)
	open := countOpenOrders(tb, ctx, s, petID)
	if want := derivedStatus(stock, open); status != want {
		tb.Fatalf("pet %d: status %s with stock %d and %d open orders, want %s", petID, status, stock, open, want)
	}
}

// wantRule checks a pet's status and stock after a store rule ran, and the invariant.
func wantRule(tb testing.TB, ctx context.Context, s *db.Store, petID int64, status string, stock int64) {
	tb.Helper()
	wantState(tb, ctx, s, petID, status, stock)
	wantInvariant(tb, ctx, s, petID)
}

// wantField fails unless err is validation_failed naming field first.
func wantField(tb testing.TB, err error, field string) {
	tb.Helper()
	wantCode(tb, err, db.EValidationFailed)
	var e *db.Error
	if !errors.As(err, &e) || len(e.Details) == 0 {
		tb.Fatalf("validation error without details: %v", err)
	}
	if got := e.Details[0].Field; got != field {
		tb.Fatalf("field = %q (%+v), want %q", got, e.Details, field)
	}
}

// mustAPIKey issues a customer key on the free plan (orders refer to keys).
func mustAPIKey(tb testing.TB, ctx context.Context, s *db.Store, name string) *db.APIKey {
	tb.Helper()
	k, _, err := s.CreateAPIKey(ctx, db.NewAPIKey{Name: &name, Role: ptr(db.RoleCustomer), Plan: ptr(db.PlanFree)})
	if err != nil {
		tb.Fatalf("create key %q: %v", name, err)
	}
	return k
}

// pinClock hands the store a test clock standing at t0 and returns it, for
// the test to move.
func pinClock(tb testing.TB, s *db.Store, t0 time.Time) *dbtest.Clock {
	tb.Helper()
	c := dbtest.NewClock(tb)
	c.Set(t0)
	s.Now = c.Now
	return c
}

// shipDate is a ship date as a client sends it (RFC 3339, whole seconds):
// a week after the present, so it stays in the future whatever the date.
func shipDate(tb testing.TB) (time.Time, string) {
	tb.Helper()
	t := dbtest.Present(tb).Add(7 * 24 * time.Hour).Truncate(time.Second)
	return t, t.Format(time.RFC3339)
}
