package db_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"petstore/db"
	"petstore/db/dbtest"
)

// TestTxRetryDeadlock forces a PostgreSQL deadlock: two transactions lock
// two pets' inventory rows in opposite orders, each taking its second lock
// only once the other holds its first (channels, no sleeps). PostgreSQL
// aborts one with 40P01; the retry rule runs it again, so both succeed,
// both changes are in, and the store counts the deadlock retry.
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
	// At least one: the retried attempt can meet the other transaction
	// again on a loaded machine (it happened once in CI, two retries), and
	// the rule allows txAttempts in all; what matters is that both commit
	// and the retries are counted.
	if got := s.TxRetries()[`40P01`] - before; got < 1 {
		t.Fatalf("deadlock retries = %d, want at least 1 (%v)", got, s.TxRetries())
	}
}

// TestTxRetrySQLiteBusy holds SQLite's write lock from another connection
// (another process, as the command line is) past the store's
// busy_timeout: the store's first attempt fails busy, the retry rule
// counts it and runs the transaction again once the lock is let go, and
// the change is in. (About 5 s: the store's busy_timeout.)
func TestTxRetrySQLiteBusy(t *testing.T) {
	ctx := context.Background()
	rawURL := dbtest.SQLiteURL(t)
	s := dbtest.OpenURL(t, rawURL)
	other, err := sqlx.Open("sqlite", "file:"+strings.TrimPrefix(rawURL, "sqlite:")+"?_pragma=busy_timeout(5000)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	held, err := other.BeginTx(ctx, nil) // immediate: the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer held.Rollback()
	before := s.TxRetries()["sqlite_busy"]

	done := make(chan error, 1)
	go func() {
		name := "Cats"
		_, err := s.CreateCategory(ctx, db.NewCategory{Name: &name})
		done <- err
	}()
	deadline := time.Now().Add(20 * time.Second)
	for s.TxRetries()["sqlite_busy"] == before {
		select {
		case err := <-done:
			t.Fatalf("the change ended (%v) while another connection held the write lock", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no busy retry counted within 20 s")
		}
		time.Sleep(20 * time.Millisecond) // polling a counter
	}
	if err := held.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the change after the retry: %v", err)
	}
	cats, _, err := s.FindCategories(ctx, db.Page{Limit: 10})
	if err != nil || len(cats) != 1 || cats[0].Name != "Cats" {
		t.Fatalf("categories = %v, %v; want Cats, written once", cats, err)
	}
}
