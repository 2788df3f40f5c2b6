package outage

import (
	"errors"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Conflict codes: a transaction that failed only because another one ran
// beside it, and that succeeds when run again.
const (
	ConflictSerialization = "40001"         // PostgreSQL serialization_failure
	ConflictDeadlock      = "40P01"         // PostgreSQL deadlock_detected
	ConflictSQLiteBusy    = "sqlite_busy"   // SQLITE_BUSY past busy_timeout
	ConflictSQLiteLocked  = "sqlite_locked" // SQLITE_LOCKED (a shared-cache table lock)
)

// Conflicts are every code Conflict returns.
var Conflicts = []string{ConflictSerialization, ConflictDeadlock, ConflictSQLiteBusy, ConflictSQLiteLocked}

// Conflict returns the code of a transient conflict err is (through any
// %w wrapping), "" for any other error.
func Conflict(err error) string {
	if err == nil {
		return ""
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		switch pqErr.Code {
		case pqerror.TRSerializationFailure:
			return ConflictSerialization
		case pqerror.TRDeadlockDetected:
			return ConflictDeadlock
		}
		return ""
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		switch liteErr.Code() & 0xff {
		case sqlite3.SQLITE_BUSY:
			return ConflictSQLiteBusy
		case sqlite3.SQLITE_LOCKED:
			return ConflictSQLiteLocked
		}
	}
	return ""
}
