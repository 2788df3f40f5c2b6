package db

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

// The River job of a delivery, as the database's triggers write it
// (migration 00008): kind, queue, and args {"deliveryId", "generation"}.
const (
	WebhookJobKind  = "webhook_delivery"
	WebhookJobQueue = "webhooks"
)

// QueueDriver is River's driver over the store's database: River keeps its
// tables beside ours and works the jobs our triggers insert. On PostgreSQL
// it goes through lib/pq's pool (riverdatabasesql: River polls, as it has
// no LISTEN there), on SQLite through modernc's (riversqlite).
func (s *Store) QueueDriver() riverdriver.Driver[*sql.Tx] {
	if s.dialect == DialectSQLite {
		return riversqlite.New(s.db.DB)
	}
	return riverdatabasesql.New(s.db.DB)
}

// migrateQueue applies River's own migrations (rivermigrate), before ours:
// the webhook triggers insert into river_job, and on SQLite River's
// migrations rebuild river_job under another name, which SQLite would
// carry into a trigger made before them. River takes no lock of its own:
// on PostgreSQL an advisory lock for the schema makes instances starting
// together take turns, as goose's does for ours.
func (s *Store) migrateQueue(ctx context.Context) error {
	m, err := rivermigrate.New(s.QueueDriver(), &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("queue migrations: %w", err)
	}
	if s.dialect == DialectPostgres {
		unlock, err := s.lockQueueMigrations(ctx)
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

// lockQueueMigrations holds a session advisory lock, named by the schema,
// on a connection of its own until unlock.
func (s *Store) lockQueueMigrations(ctx context.Context) (unlock func(), err error) {
	conn, err := s.db.Conn(ctx)
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

// RescueWebhookJobs makes delivery jobs running for longer than after
// available again and returns how many. River's own rescuer runs every
// 30 s on the elected leader only, whose lease a killed leader holds for
// up to 15 s more: a delivery cut off by a crash could wait a minute.
// Every instance runs this instead, every few seconds; after must exceed
// the longest attempt (River's JobTimeout), so a live attempt is never
// taken twice. Times are the database's, as River's are.
func (s *Store) RescueWebhookJobs(ctx context.Context, after time.Duration) (int64, error) {
	q := `UPDATE river_job SET state = 'available', scheduled_at = now()
		WHERE kind = $1 AND state = 'running' AND attempted_at < now() - make_interval(secs => $2)`
	arg := any(after.Seconds())
	if s.dialect == DialectSQLite {
		q = `UPDATE river_job SET state = 'available', scheduled_at = datetime('now', 'subsec')
			WHERE kind = $1 AND state = 'running' AND attempted_at < datetime('now', 'subsec', $2)`
		arg = "-" + strconv.FormatFloat(after.Seconds(), 'f', 3, 64) + " seconds"
	}
	res, err := s.db.ExecContext(ctx, q, WebhookJobKind, arg)
	if err != nil {
		return 0, fmt.Errorf("rescue webhook jobs: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("rescue webhook jobs: %w", err)
	}
	return n, nil
}
