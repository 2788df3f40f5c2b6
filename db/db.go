// Package db is the pet store's domain and data layer: the types, their
// validation, the coded Error, and one sqlx Store that behaves the same on
// embedded SQLite and on PostgreSQL.
package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"  // PostgreSQL driver "postgres"
	_ "modernc.org/sqlite" // embedded SQLite driver "sqlite"

	"petstore/db/internal/counters"
	"petstore/db/internal/outbox"
	"petstore/db/internal/stmtcache"
	"petstore/db/secrets"
)

// Dialects the store speaks.
const (
	DialectSQLite   = "sqlite"
	DialectPostgres = "postgres"
)

// DefaultSQLitePath is where the embedded database lives when DATABASE_URL is empty.
const DefaultSQLitePath = "var/petstore.db"

func init() {
	// modernc registers as "sqlite", a name sqlx does not know: teach it that
	// the driver takes $N placeholders so named queries compile the same on both.
	sqlx.BindDriver("sqlite", sqlx.DOLLAR)
}

// Store is the data layer over one database. It is safe for concurrent use.
type Store struct {
	db      *sqlx.DB
	dialect string

	// Currency is the store's one currency (SPEC §14, PETSTORE_CURRENCY):
	// Open sets DefaultCurrency; set it before the store is used. Pets show
	// it, and every order placed records it.
	Currency string

	// Secrets seals the secrets the store keeps (PETSTORE_SECRET_KEYS):
	// set it before the store is used. Without it the store refuses to
	// write a secret (ErrNoKeyring) rather than write one in plain text.
	Secrets *secrets.Keyring

	// Now is the clock Open was given: the one cmd hands to every part, in
	// UTC and truncated to the microsecond (PostgreSQL keeps no finer, so a
	// finer clock would return a key's createdAt that differs from every
	// later read). Tests pin it relative to the real present.
	Now func() time.Time

	// writeMu serialises write transactions on SQLite, which has a single
	// writer anyway: waiting on a Go mutex is fair and cheap, while SQLite's
	// own busy handler sleeps and retries.
	writeMu sync.Mutex

	hooksMu sync.RWMutex
	onEvent []func()

	stmts *stmtcache.Cache
	keys  keyCache
	// orderSearchCap, when set (tests), replaces the const of the same
	// name: how many matches an orders search reads before it walks.
	orderSearchCap int
	// orderSearchWindow, when set (tests), replaces the const of the same
	// name: how many orders a search that matches many walks for a page.
	orderSearchWindow int64
	// counterReads and authReads share the change counters' reads, both or
	// the auth counter alone (counters.go).
	counterReads counters.SharedReads[counters.Values]
	authReads    counters.SharedReads[counters.Values]

	// placeIn places a batch of lone orders in a transaction
	// (order_batch.go): in Go as a checkout places its lines, or on
	// PostgreSQL by one statement a round (order_place_postgres.go).
	placeIn func(ctx context.Context, tx *Tx, batch []*queuedOrder) error
	// orders gathers concurrent lone orders into one transaction each batch.
	orders orderBatcher

	// orderFault, set by tests, runs after each lone order a batch places:
	// an error it returns fails the batch's transaction.
	orderFault func(o *Order) error

	// importFault, set by tests, runs after each batch an import writes:
	// an error it returns fails the import (its transaction rolls back).
	importFault func(written int64) error

	// retries counts transactions run again after a transient conflict
	// (retry.go).
	retries txRetries

	horizon  outbox.Horizon  // PostgreSQL: how far readers may deliver events
	notifier outbox.Notifier // PostgreSQL: NOTIFY other instances after commits

	// relayHorizon is the relay's own horizon (event_relay.go): a reader's
	// candidate is judged against its own reads, and Held then reports
	// the relay's last read alone.
	relayHorizon outbox.Horizon
}

// defaultConnectTimeout bounds, in seconds, connecting to PostgreSQL (TCP
// and startup) when the URL does not set connect_timeout. Without it lib/pq
// waits forever on a server that accepts and never answers, and so does
// every request that needs a new connection; with it they fail as 503
// unavailable.
const defaultConnectTimeout = "5"

// ParseURL checks a DATABASE_URL and returns its dialect and the driver DSN.
// Empty means the embedded default.
func ParseURL(raw string) (dialect, dsn string, err error) {
	switch {
	case raw == "":
		return DialectSQLite, sqliteDSN(DefaultSQLitePath), nil
	case strings.HasPrefix(raw, "sqlite:"):
		path := strings.TrimPrefix(raw, "sqlite:")
		path = strings.TrimPrefix(path, "//")
		if path == "" {
			return "", "", errors.New("sqlite: URL has no file path")
		}
		return DialectSQLite, sqliteDSN(path), nil
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return "", "", errors.New("not a valid postgres:// URL")
		}
		if u.Query().Get("connect_timeout") == "" {
			if u.RawQuery != "" {
				u.RawQuery += "&"
			}
			u.RawQuery += "connect_timeout=" + defaultConnectTimeout
		}
		return DialectPostgres, u.String(), nil
	default:
		return "", "", errors.New("must be empty, sqlite:PATH or a postgres:// URL")
	}
}

func sqliteDSN(path string) string {
	// WAL lets readers run beside the writer; busy_timeout covers other
	// processes (the CLI) writing at the same time; _txlock=immediate takes
	// the write lock at BEGIN so a transaction never fails half-way on upgrade.
	return "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)" +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate&_time_format=sqlite"
}

// Open connects to the database named by a DATABASE_URL value and checks it
// answers. now is the clock every timestamp the store writes or compares
// comes from: the one cmd makes (tests pin it), never a clock of its own.
// Options add what the store does beside its queries (WithTracing).
func Open(ctx context.Context, rawURL string, now func() time.Time, opts ...OpenOption) (*Store, error) {
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
	if now == nil {
		return nil, errors.New("open database: no clock given")
	}
	dialect, dsn, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if dialect == DialectSQLite {
		path := strings.TrimPrefix(strings.SplitN(dsn, "?", 2)[0], "file:")
		if dir := filepath.Dir(path); dir != "." {
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return nil, fmt.Errorf("create database directory: %w", err)
			}
		}
	}
	x, err := openSQL(dialect, dsn, o)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if dialect == DialectSQLite {
		x.SetMaxOpenConns(8)
		x.SetMaxIdleConns(8)
	} else {
		x.SetMaxOpenConns(32)
		x.SetMaxIdleConns(32)
		x.SetConnMaxIdleTime(5 * time.Minute)
	}
	s := &Store{db: x, dialect: dialect, Now: now, Currency: DefaultCurrency, stmts: stmtcache.New(x)}
	s.counterReads.Read = s.readCountersWith(countersQuery)
	s.authReads.Read = s.readCountersWith(authCounterQuery)
	s.counterReads.Spacing, s.authReads.Spacing = counterReadSpacing, counterReadSpacing
	if err := s.ping(ctx, openPingTimeout); err != nil {
		x.Close()
		return nil, err
	}
	s.placeIn = placeInGo
	s.orders = orderBatcher{place: s.placeBatch, leaders: 1}
	if dialect == DialectPostgres {
		s.placeIn = placeInStatement
		s.orders.leaders = postgresOrderBatches
		s.notifier.Start(s.notify)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	s.notifier.Stop()
	s.stmts.Close()
	return s.db.Close()
}

// DB exposes the sqlx handle for metrics and benchmarks.
func (s *Store) DB() *sqlx.DB { return s.db }

// Dialect is DialectSQLite or DialectPostgres.
func (s *Store) Dialect() string { return s.dialect }

// Ping checks the database answers within pingTimeout. A pooled
// connection the server has ended (a restart, a failover, an
// administrator) says nothing of the database: database/sql drops it, and
// the ping asks again, over the pool's next connection, until one answers
// or a new one cannot be made. Only the latter is an outage.
func (s *Store) Ping(ctx context.Context) error {
	return s.ping(ctx, pingTimeout)
}

const (
	// pingTimeout bounds a health check's ping (GET /healthz, the sign-in
	// form): a database slower than that is reported unavailable.
	pingTimeout = 2 * time.Second
	// openPingTimeout bounds Open's first ping, longer: the first
	// connection to a SQLite file after a crash rebuilds its WAL index
	// from the log before it answers, and a process starting on a busy
	// machine is not an outage. A refused connection still fails at once.
	openPingTimeout = 15 * time.Second
)

func (s *Store) ping(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := s.db.PingContext(ctx)
	for dropped := 0; errors.Is(err, driver.ErrBadConn) && dropped <= s.db.Stats().MaxOpenConnections; dropped++ {
		err = s.db.PingContext(ctx)
	}
	if err != nil {
		return fmt.Errorf("ping database: %w", err)
	}
	return nil
}

// OnEvent registers fn to run after any transaction that wrote an event
// commits, so in-process listeners wake without polling.
func (s *Store) OnEvent(fn func()) {
	s.hooksMu.Lock()
	defer s.hooksMu.Unlock()
	s.onEvent = append(s.onEvent, fn)
}

// Tx is a write transaction carrying the time it started, so every row it
// touches gets the same timestamp and tests can pin it.
type Tx struct {
	*sqlx.Tx
	ctx    context.Context
	store  *Store
	now    time.Time
	events []pendingEvent // written at Commit, in order
	// wroteEvents is set once a statement of the transaction inserted
	// events: listeners are woken after the commit.
	wroteEvents bool
}

// begin starts a write transaction. On SQLite writers queue on writeMu.
func (s *Store) begin(ctx context.Context) (*Tx, error) {
	if s.dialect == DialectSQLite {
		s.writeMu.Lock()
	}
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		if s.dialect == DialectSQLite {
			s.writeMu.Unlock()
		}
		return nil, fmt.Errorf("begin: %w", err)
	}
	return &Tx{Tx: tx, ctx: ctx, store: s, now: s.Now().UTC()}, nil
}

// Commit writes the transaction's events, commits, and then wakes event
// listeners when there were any.
func (tx *Tx) Commit() error {
	store := tx.store
	if err := tx.flushEvents(tx.ctx); err != nil {
		tx.Rollback()
		return err
	}
	err := tx.Tx.Commit()
	tx.release()
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if tx.wroteEvents {
		store.eventsCommitted()
	}
	return nil
}

// eventsCommitted wakes event listeners after a commit that wrote events:
// in-process hooks directly, other instances through the notifier.
func (s *Store) eventsCommitted() {
	s.notifier.Kick()
	s.hooksMu.RLock()
	hooks := s.onEvent
	s.hooksMu.RUnlock()
	for _, fn := range hooks {
		fn()
	}
}

// Rollback aborts the transaction; after Commit it is a no-op, so it can be deferred.
func (tx *Tx) Rollback() {
	_ = tx.Tx.Rollback() // sql.ErrTxDone after Commit; the transaction is over either way
	tx.release()
}

func (tx *Tx) release() {
	if tx.store == nil {
		return
	}
	if tx.store.dialect == DialectSQLite {
		tx.store.writeMu.Unlock()
	}
	tx.store = nil
}

func (tx *Tx) dialect() string {
	if tx.store == nil {
		return ""
	}
	return tx.store.dialect
}

// get, sel and exec run a query on the pool through the statement cache.
func (s *Store) get(ctx context.Context, dest any, query string, args ...any) error {
	return s.stmts.Get(ctx, dest, query, args...)
}

func (s *Store) sel(ctx context.Context, dest any, query string, args ...any) error {
	return s.stmts.Select(ctx, dest, query, args...)
}

func (s *Store) exec(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	// A statement on its own is a transaction of its own: the retry rule
	// (retry.go) holds for it too.
	err = s.retry(ctx, func() (err error) {
		res, err = s.stmts.Exec(ctx, query, args...)
		return err
	})
	return res, err
}

// get and exec run a query in the transaction, through the statement
// cache.
func (tx *Tx) get(ctx context.Context, dest any, query string, args ...any) error {
	return tx.store.stmts.TxGet(ctx, tx.Tx, dest, query, args...)
}

func (tx *Tx) sel(ctx context.Context, dest any, query string, args ...any) error {
	return tx.store.stmts.TxSelect(ctx, tx.Tx, dest, query, args...)
}

func (tx *Tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.store.stmts.TxExec(ctx, tx.Tx, query, args...)
}
