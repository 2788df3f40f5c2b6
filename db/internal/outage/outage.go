// Package outage tells a database that cannot serve right now from a bug,
// by the driver's error type, SQLSTATE or result code (through any %w
// wrapping), never by message text, which changes with versions and
// locales.
package outage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Is reports whether err, a driver's or database/sql's, means the database
// cannot serve right now: unreachable, cut, dropped, shutting down, out of
// connections or resources, or too slow for the caller's deadline.
func Is(err error) bool {
	if err == nil {
		return false
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		return unavailableSQLState(pqErr.Code)
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		return unavailableSQLiteCode(liteErr.Code())
	}
	return errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, sql.ErrConnDone) ||
		brokenConnection(err)
}

// unavailableSQLState picks the PostgreSQL conditions that are the server's
// state, not the query's fault. A query canceled (57014) is one that ran
// past a deadline: statement_timeout, or a context deadline that lib/pq
// turns into a cancel request (this server never cancels otherwise).
func unavailableSQLState(code pqerror.Code) bool {
	switch code.Class() {
	case pqerror.ClassConnectionException, // 08: cannot connect, connection lost
		pqerror.ClassInsufficientResources, // 53: disk full, out of memory, too many connections
		pqerror.ClassInvalidCatalogName:    // 3D: the database was dropped (or never made)
		return true
	}
	switch code {
	case pqerror.QueryCanceled, // 57014
		pqerror.AdminShutdown,          // 57P01: terminated, or the database dropped WITH (FORCE)
		pqerror.CrashShutdown,          // 57P02
		pqerror.CannotConnectNow,       // 57P03: starting up, shutting down, recovering
		pqerror.IdleSessionTimeout,     // 57P05: the server closed an idle pooled connection
		pqerror.ReadOnlySQLTransaction, // 25006: a failover left us on a read-only standby
		pqerror.IOError:                // 58030
		return true
	}
	return false
}

// unavailableSQLiteCode picks the SQLite result codes that mean the file
// cannot be used now: locked past busy_timeout, gone, unreadable,
// unwritable or full. code may be an extended code (SQLITE_IOERR_READ):
// its low byte is the primary one.
func unavailableSQLiteCode(code int) bool {
	switch code & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_CANTOPEN,
		sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY,
		sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}

// brokenConnection recognises a network failure between us and the
// database server: a refused, reset or timed-out connection, a write to a
// closed one, or a read that found it closed mid-answer.
func brokenConnection(err error) bool {
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	for _, target := range []error{
		syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
		syscall.ETIMEDOUT, syscall.EHOSTUNREACH, syscall.ENETUNREACH,
		io.EOF, io.ErrUnexpectedEOF, net.ErrClosed,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
