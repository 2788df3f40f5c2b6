package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"petstore/db"
)

// measureRawWrite is the orders' write ceiling on one database: the minimal
// order transaction — lock the pet row, decrement its stock, insert the
// order, insert its event, commit — in a closed loop through sqlx from
// workers goroutines, with no HTTP, no rules and no shared lock of the
// store's. Each order takes one unit of a random pet of stocked. On SQLite,
// which has one writer, the transactions queue on a mutex, as the store's
// own writers do, rather than on SQLite's sleeping busy handler.
func measureRawWrite(ctx context.Context, databaseURL string, stocked []int64, workers int, warmup, d time.Duration) (phase, error) {
	store, err := db.Open(ctx, databaseURL, wallClock)
	if err != nil {
		return phase{}, err
	}
	defer store.Close()
	conn := store.DB()
	lockPet := `SELECT i.quantity FROM pets p JOIN inventory i ON i.pet_id = p.id WHERE p.id = $1`
	var writer sync.Locker = noLock{}
	if store.Dialect() == db.DialectPostgres {
		lockPet += ` FOR UPDATE OF p, i`
	} else {
		writer = &sync.Mutex{}
	}
	order := func(ctx context.Context) error {
		pet := stocked[rand.IntN(len(stocked))]
		now := wallClock()
		writer.Lock()
		defer writer.Unlock()
		tx, err := conn.BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var stock int64
		if err := tx.GetContext(ctx, &stock, lockPet, pet); err != nil {
			return fmt.Errorf("lock pet: %w", err)
		}
		if stock < 1 {
			return fmt.Errorf("pet %d is out of stock", pet)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE inventory SET quantity = quantity - 1, updated_at = $1 WHERE pet_id = $2`, now, pet); err != nil {
			return fmt.Errorf("decrement stock: %w", err)
		}
		var id int64
		if err := tx.GetContext(ctx, &id, `INSERT INTO orders (pet_id, quantity, state, created_at, updated_at)
			VALUES ($1, 1, 'open', $2, $2) RETURNING id`, pet, now); err != nil {
			return fmt.Errorf("insert order: %w", err)
		}
		data := fmt.Sprintf(`{"id":%d,"petId":%d,"quantity":1,"status":"placed","complete":false}`, id, pet)
		if _, err := tx.ExecContext(ctx, `INSERT INTO events (type, data, created_at) VALUES ($1, $2, $3)`, db.EventOrderCreated, data, now); err != nil {
			return fmt.Errorf("insert event: %w", err)
		}
		return tx.Commit()
	}
	ph, err := closedLoop(ctx, workers, warmup, d, order)
	if err != nil {
		return phase{}, fmt.Errorf("raw write: %w", err)
	}
	return ph, nil
}

// noLock is the sync.Locker of a database that takes concurrent writers.
type noLock struct{}

func (noLock) Lock()   {}
func (noLock) Unlock() {}

// checkNoOversell checks that, for every stocked pet, the stock left plus
// the units of its orders that hold stock (open or complete) is the stock
// it was seeded with: no order was placed without stock to back it, and no
// unit was lost. It reports the totals it compared.
func checkNoOversell(ctx context.Context, databaseURL string, stocked []int64) (string, error) {
	store, err := db.Open(ctx, databaseURL, wallClock)
	if err != nil {
		return "", err
	}
	defer store.Close()
	var left, ordered int64
	q, args, err := sqlx.In(`SELECT COALESCE(SUM(quantity), 0) FROM inventory WHERE pet_id IN (?)`, stocked)
	if err != nil {
		return "", err
	}
	if err := store.DB().GetContext(ctx, &left, store.DB().Rebind(q), args...); err != nil {
		return "", fmt.Errorf("stock left: %w", err)
	}
	q, args, err = sqlx.In(`SELECT COALESCE(SUM(quantity), 0) FROM orders WHERE state <> 'cancelled' AND pet_id IN (?)`, stocked)
	if err != nil {
		return "", err
	}
	if err := store.DB().GetContext(ctx, &ordered, store.DB().Rebind(q), args...); err != nil {
		return "", fmt.Errorf("units ordered: %w", err)
	}
	start := int64(len(stocked)) * benchStock
	summary := fmt.Sprintf("stock left %s + units ordered %s = %s, seeded %s",
		thousands(float64(left)), thousands(float64(ordered)), thousands(float64(left+ordered)), thousands(float64(start)))
	if left+ordered != start || left < 0 {
		return summary, fmt.Errorf("oversell check failed: %s", summary)
	}
	return summary, nil
}
