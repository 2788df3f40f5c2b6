package db_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestTxRetryDeadlock forces a PostgreSQL deadlock: two transactions lock
// two pets' inventory rows in opposite orders, each taking its second lock
// only once the other holds its first (channels, no sleeps). PostgreSQL
// aborts one with 40P01; the retry rule runs it again, so both succeed,
// both changes are in, and the store counts one deadlock retry.
func TestTxRetryDeadlock(t *testing.T) {
	dbtest.RequirePostgres(t)
	ctx := context.Background()
	s := dbtest.Postgres(t)
	cat := MustCreateCategory(t, ctx, s, "Dogs")
	a := MustCreatePet(t, ctx, s, cat.ID, "Rex", 5)
	b := MustCreatePet(t, ctx, s, cat.ID, "Fido", 5)
	before := s.TxRetries()[`40P01`]

	aLocked, bLocked := make(chan struct{}), make(chan struct{})
	lockInOrder := func(first, second int64, mine, theirs chan struct{}) error {
		attempt := 0
		return s.RunInTx(ctx, func(tx *sqlx.Tx) error {
			attempt++
			// The detector runs after deadlock_timeout (1 s by default).
			if _, err := tx.Exec(`SET LOCAL deadlock_timeout = '50ms'`); err != nil {
				return err
			}
			if _, err := tx.Exec(`UPDATE inventory SET quantity = quantity + 1 WHERE pet_id = $1`, first); err != nil {
				return err
			}
			if attempt == 1 {
				close(mine)
				<-theirs
			}
			_, err := tx.Exec(`UPDATE inventory SET quantity = quantity + 1 WHERE pet_id = $1`, second)
			return err
		})
	}
	var wg sync.WaitGroup
	var errA, errB error
	wg.Go(func() { errA = lockInOrder(a.ID, b.ID, aLocked, bLocked) })
	wg.Go(func() { errB = lockInOrder(b.ID, a.ID, bLocked, aLocked) })
	wg.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("transactions = %v, %v; want both to succeed after the retry", errA, errB)
	}
	for _, p := range []*db.Pet{a, b} {
		got, err := s.FindPetByID(ctx, p.ID)
		if err != nil || got.Stock != 7 {
			t.Fatalf("pet %d stock = %v, %v; want 7 (both transactions' changes)", p.ID, got, err)
		}
	}
	if got := s.TxRetries()[`40P01`] - before; got != 1 {
		t.Fatalf("deadlock retries = %d, want 1 (%v)", got, s.TxRetries())
	}
}
