// Package riverdb is River's side of the store's database: the driver
// River runs on (one per dialect), River's own migrations, and the rescue
// of jobs cut off by a crash. River keeps its tables (river_job and the
// rest) beside the store's; only this package and web/queue, River's one
// owner in the process, name them. It sits under db, not in web/queue,
// because River's schema is migrated with the store's (db.Store.Migrate,
// before goose's), which the tests' templates and `petstore migrate` run
// too; db's domain files never name River.
package riverdb

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
)

// Dialects as the store names them (db.DialectSQLite, db.DialectPostgres).
const (
	sqlite   = "sqlite"
	postgres = "postgres"
)

// Driver is River's driver over the store's pool: on PostgreSQL through
// lib/pq (riverdatabasesql: River polls, as it has no LISTEN there), on
// SQLite through modernc (riversqlite).
func Driver(dialect string, db *sql.DB) riverdriver.Driver[*sql.Tx] {
	if dialect == sqlite {
		return riversqlite.New(db)
	}
	return riverdatabasesql.New(db)
}

// Migrate applies River's own migrations (rivermigrate). River takes no
// lock of its own: on PostgreSQL an advisory lock named by the schema
// makes instances starting together take turns, as goose's does for the
// store's migrations.
func Migrate(ctx context.Context, dialect string, db *sql.DB) error {
	m, err := rivermigrate.New(Driver(dialect, db), &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("queue migrations: %w", err)
	}
	if dialect == postgres {
		unlock, err := lockMigrations(ctx, db)
		if err != nil {
			return err
		}
		defer unlock()
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("queue migrations: %w", err)
	}
	return nil
}

// lockMigrations holds a session advisory lock, named by the schema, on a
// connection of its own until unlock.
func lockMigrations(ctx context.Context, db *sql.DB) (unlock func(), err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("queue migrations: %w", err)
	}
	var schema string
	if err := conn.QueryRowContext(ctx, `SELECT COALESCE(current_schema(), '')`).Scan(&schema); err != nil {
		conn.Close()
		return nil, fmt.Errorf("queue migrations: current schema: %w", err)
	}
	h := fnv.New64a()
	h.Write([]byte("petstore river migrations " + schema))
	id := int64(h.Sum64() >> 1)
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, id); err != nil {
		conn.Close()
		return nil, fmt.Errorf("queue migrations: lock: %w", err)
	}
	return func() {
		_, _ = conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, id)
		conn.Close()
	}, nil
}

// Rescue makes the jobs of kind running for longer than after available
// again and returns how many. River's own rescuer runs every 30 s on the
// elected leader only, whose lease a killed leader holds for up to 15 s
// more: a job cut off by a crash could wait a minute. after must exceed
// the kind's longest attempt, so that a live attempt is never taken twice.
// Times are the database's, as River's are.
func Rescue(ctx context.Context, dialect string, db *sql.DB, kind string, after time.Duration) (int64, error) {
	q := `UPDATE river_job SET state = 'available', scheduled_at = now()
		WHERE kind = $1 AND state = 'running' AND attempted_at < now() - make_interval(secs => $2)`
	arg := any(after.Seconds())
	if dialect == sqlite {
		// River's SQLite driver keeps times as text it compares as text,
		// in datetime()'s format.
		q = `UPDATE river_job SET state = 'available', scheduled_at = datetime('now', 'subsec')
			WHERE kind = $1 AND state = 'running' AND attempted_at < datetime('now', 'subsec', $2)`
		arg = "-" + strconv.FormatFloat(after.Seconds(), 'f', 3, 64) + " seconds"
	}
	res, err := db.ExecContext(ctx, q, kind, arg)
	if err != nil {
		return 0, fmt.Errorf("rescue %s jobs: %w", kind, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("rescue %s jobs: %w", kind, err)
	}
	return n, nil
}

// JobCount is how many of a queue's jobs are in a state, and how long
// the oldest of them has been due (its scheduled_at; a job waiting to be
// worked, available, has been due that long).
type JobCount struct {
	Queue, State string
	N            int64
	Age          time.Duration
}

// CountJobs counts the jobs of every queue by state: one grouped read of
// River's table (River's own list reads rows, not counts), answered on
// PostgreSQL by River's index on (state, queue, …). Ages are on the
// database's clock, as River's times are.
func CountJobs(ctx context.Context, dialect string, db *sql.DB) ([]JobCount, error) {
	q := `SELECT queue, state, count(*), COALESCE(EXTRACT(EPOCH FROM now() - min(scheduled_at))::float8, 0)
		FROM river_job GROUP BY queue, state ORDER BY queue, state`
	if dialect == sqlite {
		q = `SELECT queue, state, count(*), COALESCE((julianday('now') - julianday(min(scheduled_at))) * 86400.0, 0)
			FROM river_job GROUP BY queue, state ORDER BY queue, state`
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	defer rows.Close()
	var out []JobCount
	for rows.Next() {
		var c JobCount
		var age float64
		if err := rows.Scan(&c.Queue, &c.State, &c.N, &age); err != nil {
			return nil, fmt.Errorf("count jobs: %w", err)
		}
		c.Age = time.Duration(age * float64(time.Second))
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	return out, nil
}
