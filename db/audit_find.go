package db

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// AuditRetention is how long the audit log keeps an entry (SPEC §16):
// housekeeping deletes older ones, nothing else does.
const AuditRetention = 400 * 24 * time.Hour

// maxAuditFilterLen bounds a text filter of the audit log (an action, a
// type, an id): longer than anything the store writes.
const maxAuditFilterLen = 100

// AuditFilter selects audit entries; zero fields do not filter. An actor
// or target id filters only with its type. Dates are whole days in UTC.
type AuditFilter struct {
	ActorType, ActorID string
	// ActorName finds the entries of the staff users whose username starts
	// with it, case aside (the console's filter: "clara").
	ActorName string
	Action    string
	// ActionPrefix finds the actions that start with it: "webhook." or
	// "webhook" finds every webhook change (the console's filter).
	ActionPrefix         string
	TargetType, TargetID string
	Dates                DateRange
}

// Validate checks the filter's texts (printable UTF-8, at most 100
// characters), the actor type and that an id comes with its type. Its
// problems name the query parameters: actorType, actorId, action,
// targetType, targetId. Errors: validation_failed.
func (f AuditFilter) Validate() error {
	var p Problems
	for _, fv := range []struct{ field, value string }{
		{"actorType", f.ActorType}, {"actorId", f.ActorID}, {"action", f.Action},
		{"targetType", f.TargetType}, {"targetId", f.TargetID}, {"actor", f.ActorName}, {"action", f.ActionPrefix},
	} {
		switch {
		case !utf8.ValidString(fv.value):
			p.Add(fv.field, "must be valid UTF-8")
		case hasControl(fv.value):
			p.Add(fv.field, "must not contain control characters")
		case utf8.RuneCountInString(fv.value) > maxAuditFilterLen:
			p.Add(fv.field, "must be at most %d characters", maxAuditFilterLen)
		}
	}
	if f.ActorType != "" && !slices.Contains(ActorTypes, f.ActorType) {
		p.Add("actorType", "must be one of %s", strings.Join(ActorTypes, ", "))
	}
	if f.ActorID != "" && f.ActorType == "" {
		p.Add("actorId", "needs actorType")
	}
	if f.TargetID != "" && f.TargetType == "" {
		p.Add("targetId", "needs targetType")
	}
	return p.Err()
}

// auditRow is an audit_log row.
type auditRow struct {
	ID         int64     `db:"id"`
	At         time.Time `db:"at"`
	ActorType  string    `db:"actor_type"`
	ActorID    string    `db:"actor_id"`
	ActorName  string    `db:"actor_name"`
	Action     string    `db:"action"`
	TargetType string    `db:"target_type"`
	TargetID   string    `db:"target_id"`
	Changes    string    `db:"changes"`
	RequestID  string    `db:"request_id"`
	IP         string    `db:"ip"`
}

const auditCols = `id, at, actor_type, actor_id, actor_name, action, target_type, target_id, changes, request_id, ip`

// entry is the row as the API shows it.
func (r *auditRow) entry() *AuditEntry {
	changes := json.RawMessage(r.Changes)
	if !json.Valid(changes) {
		changes = json.RawMessage(`{}`)
	}
	return &AuditEntry{
		ID: r.ID, At: r.At.UTC(), Actor: Actor{Type: r.ActorType, ID: r.ActorID, Name: r.ActorName},
		Action: r.Action, Target: Target{Type: r.TargetType, ID: r.TargetID},
		Changes: changes, RequestID: r.RequestID, IP: r.IP,
	}
}

// FindAudit lists audit entries newest first (by id, which follows the
// order they were written in), a page after page.AfterID. Each filter
// walks one of audit_log's indexes in id order.
// Errors: validation_failed.
func (s *Store) FindAudit(ctx context.Context, f AuditFilter, page Page) ([]*AuditEntry, bool, error) {
	if err := f.Validate(); err != nil {
		return nil, false, err
	}
	var w where
	if f.ActorType != "" {
		w.add("actor_type = " + w.arg(f.ActorType))
		if f.ActorID != "" {
			w.add("actor_id = " + w.arg(f.ActorID))
		}
	}
	if f.ActorName != "" {
		w.add("actor_type = 'staff'")
		w.add("actor_id IN (SELECT CAST(u.id AS TEXT) FROM staff_users u WHERE " + s.keyRange(&w, "u", "username_key", foldName(f.ActorName)) + ")")
	}
	action := "action"
	if s.dialect == DialectPostgres {
		// audit_log_action_prefix is under "C" (migration 00021).
		action += ` COLLATE "C"`
	}
	if f.Action != "" {
		w.add(action + " = " + w.arg(f.Action))
	}
	if f.ActionPrefix != "" {
		w.add(action + " >= " + w.arg(f.ActionPrefix) + " AND " + action + " < " + w.arg(prefixEnd(f.ActionPrefix)))
	}
	if f.TargetType != "" {
		w.add("target_type = " + w.arg(f.TargetType))
		if f.TargetID != "" {
			w.add("target_id = " + w.arg(f.TargetID))
		}
	}
	if !f.Dates.From.IsZero() {
		w.add("at >= " + w.arg(f.Dates.Start()))
	}
	if !f.Dates.To.IsZero() {
		w.add("at < " + w.arg(f.Dates.End()))
	}
	tail := page.newestFirst(&w, "id")
	// Filters make the plan depend on their values: unprepared on
	// PostgreSQL (listSelector).
	rows, more, err := selectPageWith[*auditRow](ctx, s.listSelector(len(w.conds) > 0), "audit entries", page,
		`SELECT `+auditCols+` FROM audit_log`+w.String()+tail, w.args...)
	if err != nil {
		return nil, false, err
	}
	out := make([]*AuditEntry, len(rows))
	for i, r := range rows {
		out[i] = r.entry()
	}
	return out, more, nil
}

// PurgeAudit deletes audit entries older than AuditRetention (SPEC §16).
func (s *Store) PurgeAudit(ctx context.Context) (int64, error) {
	return s.purge(ctx, "audit_log", "at < $1", s.Now().UTC().Add(-AuditRetention))
}

// DateRange is a span of whole days in UTC, both ends included; a zero
// end is open.
type DateRange struct {
	From, To time.Time // midnight UTC
}

// MaxExportDays bounds an export's range (SPEC §16), both ends included.
const MaxExportDays = 366

// ParseDate reads a YYYY-MM-DD date as midnight UTC.
func ParseDate(s string) (time.Time, bool) {
	if len(s) != len(time.DateOnly) {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation(time.DateOnly, s, time.UTC)
	return t, err == nil
}

// ParseDateRange reads from and to (YYYY-MM-DD, UTC, both included; empty
// is an open end unless required) and checks to ≥ from and, when maxDays
// > 0, that the range is at most maxDays days. Its problems name from and
// to. Errors: validation_failed.
func ParseDateRange(from, to string, required bool, maxDays int) (DateRange, error) {
	var p Problems
	var r DateRange
	for _, e := range []struct {
		field, value string
		dst          *time.Time
	}{{"from", from, &r.From}, {"to", to, &r.To}} {
		switch t, ok := ParseDate(e.value); {
		case e.value == "" && required:
			p.Add(e.field, "is required (YYYY-MM-DD)")
		case e.value == "":
		case !ok:
			p.Add(e.field, "must be a date as YYYY-MM-DD")
		default:
			*e.dst = t
		}
	}
	if !r.From.IsZero() && !r.To.IsZero() {
		switch {
		case r.To.Before(r.From):
			p.Add("to", "must not be before from")
		case maxDays > 0 && r.Days() > maxDays:
			p.Add("to", "the range may span at most %d days", maxDays)
		}
	}
	return r, p.Err()
}

// Days is how many days the range spans, both ends included.
func (r DateRange) Days() int {
	return int(r.To.Sub(r.From)/(24*time.Hour)) + 1
}

// Start is the first instant of the range.
func (r DateRange) Start() time.Time { return r.From }

// End is the first instant after the range: midnight after To.
func (r DateRange) End() time.Time { return r.To.AddDate(0, 0, 1) }

// String is the range as an ISO 8601 interval of dates: FROM/TO.
func (r DateRange) String() string {
	return r.From.Format(time.DateOnly) + "/" + r.To.Format(time.DateOnly)
}
