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

// measureRawWrite is the orders' write ceiling on one database: the least
// an order can cost there — lock the pet's stock row, decrement it, insert
// the order, insert its event, commit — in a closed loop through sqlx from
// workers goroutines, with prepared statements, no HTTP, no store rules and
// no lock of the store's. Each order takes one unit of a random pet of
// stocked. On PostgreSQL that is one statement in a transaction of its own
// (the UPDATE takes the row lock; DML in CTEs writes the rest); SQLite,
// which has one writer and no DML in CTEs, runs the three statements in one
// transaction, queued on a mutex as the store's own writers are.
func measureRawWrite(ctx context.Context, databaseURL string, stocked []int64, workers int, warmup, d time.Duration) (phase, error) {
	store, err := db.Open(ctx, databaseURL, wallClock)
	if err != nil {
		return phase{}, err
	}
	defer store.Close()
	var order func(ctx context.Context, pet int64) error
	if store.Dialect() == db.DialectPostgres {
		order, err = rawOrderPostgres(ctx, store.DB())
	} else {
		order, err = rawOrderSQLite(ctx, store.DB())
	}
	if err != nil {
		return phase{}, fmt.Errorf("raw write: prepare: %w", err)
	}
	ph, err := closedLoop(ctx, workers, warmup, d, func(ctx context.Context) error {
		return order(ctx, stocked[rand.IntN(len(stocked))])
	})
	if err != nil {
		return phase{}, fmt.Errorf("raw write: %w", err)
	}
	return ph, nil
}

// rawEventData is the JSON of a raw order's event, about the size of the
// store's order.created data.
const rawEventData = `'{"id":' || o.id || ',"petId":' || o.pet_id || ',"quantity":1,"status":"placed","complete":false}'`

// rawOrderPostgres prepares the one-statement order of PostgreSQL.
func rawOrderPostgres(ctx context.Context, conn *sqlx.DB) (func(context.Context, int64) error, error) {
	st, err := conn.PreparexContext(ctx, `WITH stock AS (
			UPDATE inventory SET quantity = quantity - 1, updated_at = $2 WHERE pet_id = $1 AND quantity >= 1 RETURNING pet_id),
		o AS (
			INSERT INTO orders (pet_id, quantity, state, created_at, updated_at)
			SELECT pet_id, 1, 'open', $2, $2 FROM stock RETURNING id, pet_id)
		INSERT INTO events (type, data, created_at) SELECT '`+db.EventOrderCreated+`', `+rawEventData+`, $2 FROM o RETURNING id`)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, pet int64) error {
		var id int64
		if err := st.GetContext(ctx, &id, pet, wallClock()); err != nil {
			return fmt.Errorf("order pet %d: %w", pet, err)
		}
		return nil
	}, nil
}

// rawOrderSQLite prepares the three statements of SQLite's order.
func rawOrderSQLite(ctx context.Context, conn *sqlx.DB) (func(context.Context, int64) error, error) {
	var sts [3]*sqlx.Stmt
	for i, q := range []string{
		`UPDATE inventory SET quantity = quantity - 1, updated_at = $2 WHERE pet_id = $1 AND quantity >= 1 RETURNING pet_id`,
		`INSERT INTO orders (pet_id, quantity, state, created_at, updated_at) VALUES ($1, 1, 'open', $2, $2) RETURNING id`,
		`INSERT INTO events (type, data, created_at) SELECT '` + db.EventOrderCreated + `', ` + rawEventData + `, $3 FROM (SELECT $1 AS id, $2 AS pet_id) AS o`,
	} {
		st, err := conn.PreparexContext(ctx, q)
		if err != nil {
			return nil, err
		}
		sts[i] = st
	}
	var writer sync.Mutex
	return func(ctx context.Context, pet int64) error {
		now := wallClock()
		writer.Lock()
		defer writer.Unlock()
		tx, err := conn.BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var locked, id int64
		if err := tx.StmtxContext(ctx, sts[0]).GetContext(ctx, &locked, pet, now); err != nil {
			return fmt.Errorf("decrement stock of pet %d: %w", pet, err)
		}
		if err := tx.StmtxContext(ctx, sts[1]).GetContext(ctx, &id, pet, now); err != nil {
			return fmt.Errorf("insert order: %w", err)
		}
		if _, err := tx.StmtxContext(ctx, sts[2]).ExecContext(ctx, id, pet, now); err != nil {
			return fmt.Errorf("insert event: %w", err)
		}
		return tx.Commit()
	}, nil
}

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
