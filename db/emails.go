package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Email states of SPEC §19.
const (
	EmailQueued = "queued"
	EmailSent   = "sent"
	EmailFailed = "failed"
	EmailKept   = "kept"
)

// EmailStatuses are the states the Emails page filters on.
var EmailStatuses = []string{EmailQueued, EmailSent, EmailFailed, EmailKept}

// Kinds of email.
const (
	EmailOrderPlaced   = "order_placed"
	EmailLineCancelled = "line_cancelled"
	EmailOrderReady    = "order_ready"
	EmailStaffNewOrder = "staff_new_order"
)

// EmailKinds are the kinds the Emails page filters on.
var EmailKinds = []string{EmailOrderPlaced, EmailLineCancelled, EmailOrderReady, EmailStaffNewOrder}

// Outcomes of an attempt.
const (
	AttemptSent      = "sent"
	AttemptTemporary = "temporary"
	AttemptPermanent = "permanent"
	AttemptKept      = "kept"
)

// EmailBodyRetention is how long housekeeping keeps a kept or sent
// email's bodies; the row stays.
const EmailBodyRetention = 90 * 24 * time.Hour

// Audit actions of SPEC §19.
const (
	AuditEmailResend     = "email.resend"
	AuditSettingsUpdate  = "settings.update"
	auditTargetEmail     = "email"
	auditTargetSettings  = "settings"
	auditTargetStaffPref = "staff"
	// AuditStaffEmail is a staff user's change of their own email
	// preferences (Account page).
	AuditStaffEmail = "staff.email"
)

// Email is one message to one address, rendered when it was made.
type Email struct {
	ID         int64  `db:"id"`
	Kind       string `db:"kind"`
	FromName   string `db:"from_name"`
	ReplyTo    string `db:"reply_to"`
	ToName     string `db:"to_name"`
	ToAddr     string `db:"to_addr"`
	Subject    string `db:"subject"`
	Text       string `db:"text_body"`
	HTML       string `db:"html_body"`
	MessageID  string `db:"message_id"`
	Status     string `db:"status"`
	Generation int64  `db:"generation"`
	// Tries counts the temporary failures of this generation.
	Tries         int        `db:"tries"`
	NextAttemptAt *time.Time `db:"next_attempt_at"`
	BodiesDropped bool       `db:"bodies_dropped"`
	CreatedAt     time.Time  `db:"created_at"`
	SentAt        *time.Time `db:"sent_at"`
	// Traceparent is the span of the change that caused the email (its
	// event's, SPEC §21), nil when tracing was off.
	Traceparent *string `db:"traceparent"`
	Attempts    []EmailAttempt
}

// EmailAttempt is one try of an email: the SMTP server's answer, or the
// error that kept it from answering.
type EmailAttempt struct {
	EmailID    int64     `db:"email_id"`
	At         time.Time `db:"at"`
	DurationMs int64     `db:"duration_ms"`
	Outcome    string    `db:"outcome"`
	SMTPCode   *int      `db:"smtp_code"`
	Answer     string    `db:"answer"`
}

const emailCols = `id, kind, from_name, reply_to, to_name, to_addr, subject, text_body, html_body, message_id, status, generation, tries, next_attempt_at, bodies_dropped, created_at, sent_at, traceparent`

// EmailFilter selects emails, newest first.
type EmailFilter struct {
	Status, Kind string // "" for any
	To           string // prefix of the address, case-insensitive; "" for any
	Page         Page
}

// FindEmails lists emails newest first, with their attempts, and whether
// more follow. Errors: validation_failed (an unknown status or kind).
func (s *Store) FindEmails(ctx context.Context, f EmailFilter) ([]*Email, bool, error) {
	var w where
	if f.Status != "" {
		if !slices.Contains(EmailStatuses, f.Status) {
			return nil, false, Invalid("status", "must be one of %s", strings.Join(EmailStatuses, ", "))
		}
		w.add("status = " + w.arg(f.Status))
	}
	if f.Kind != "" {
		if !slices.Contains(EmailKinds, f.Kind) {
			return nil, false, Invalid("kind", "must be one of %s", strings.Join(EmailKinds, ", "))
		}
		w.add("kind = " + w.arg(f.Kind))
	}
	if to := strings.ToLower(strings.TrimSpace(f.To)); to != "" {
		if len(to) > MaxEmailLen {
			return nil, false, Invalid("to", "must be at most %d characters", MaxEmailLen)
		}
		w.add("LOWER(to_addr) LIKE " + w.arg(escapeLike(to)+"%") + ` ESCAPE '\'`)
	}
	tail := f.Page.newestFirst(&w, "id")
	es, more, err := selectPageWith[*Email](ctx, s.stmts.SelectOnce, "emails", f.Page, `SELECT `+emailCols+` FROM emails`+w.String()+tail, w.args...)
	if err != nil {
		return nil, false, err
	}
	return es, more, s.fillEmailAttempts(ctx, es...)
}

// escapeLike escapes LIKE's wildcards in s (the escape character is \).
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// FindEmailByID returns one email with its attempts. Errors: not_found.
func (s *Store) FindEmailByID(ctx context.Context, id int64) (*Email, error) {
	e, err := findOne[Email](ctx, s.get, "email", notFound("Email", id), `SELECT `+emailCols+` FROM emails WHERE id = $1`, id)
	if err != nil {
		return nil, err
	}
	return e, s.fillEmailAttempts(ctx, e)
}

// fillEmailAttempts sets Attempts on es, oldest first.
func (s *Store) fillEmailAttempts(ctx context.Context, es ...*Email) error {
	if len(es) == 0 {
		return nil
	}
	ids := make([]int64, len(es))
	byID := map[int64]*Email{}
	for i, e := range es {
		ids[i], byID[e.ID] = e.ID, e
		e.Attempts = []EmailAttempt{}
	}
	cond, arg := idSet(s.dialect, "email_id", ids)
	var as []EmailAttempt
	if err := s.sel(ctx, &as, `SELECT email_id, at, duration_ms, outcome, smtp_code, answer FROM email_attempts WHERE `+cond+` ORDER BY id`, arg); err != nil {
		return fmt.Errorf("find email attempts: %w", err)
	}
	for _, a := range as {
		byID[a.EmailID].Attempts = append(byID[a.EmailID].Attempts, a)
	}
	return nil
}

// EmailToSend returns the email a job of generation must send, or nil
// when there is nothing to send (sent, failed, kept, or resent since: a
// newer generation's job sends it).
func (s *Store) EmailToSend(ctx context.Context, id, generation int64) (*Email, error) {
	e, err := findOne[Email](ctx, s.get, "email", notFound("Email", id), `SELECT `+emailCols+` FROM emails WHERE id = $1`, id)
	if ErrorCode(err) == ENotFound {
		return nil, nil // housekeeping or a test removed it
	}
	if err != nil {
		return nil, err
	}
	if e.Status != EmailQueued || e.Generation != generation {
		return nil, nil
	}
	return e, nil
}

// EmailOutcome is what one attempt at the email ID of Generation decided.
type EmailOutcome struct {
	ID, Generation int64
	Attempt        EmailAttempt
	// Status is the email's state after it: queued (another attempt at
	// NextAttemptAt), sent or failed.
	Status        string
	NextAttemptAt *time.Time
}

// RecordEmailAttempts writes attempts, each with its email's state after
// it, in one transaction (a send job's attempts together: one write, not
// one per email, in SQLite's single writer's queue); an attempt of an
// older generation (resent meanwhile) is recorded but changes no state.
// It reports, for each, whether the state changed.
func (s *Store) RecordEmailAttempts(ctx context.Context, os []EmailOutcome) ([]bool, error) {
	if len(os) == 0 {
		return nil, nil
	}
	return inTx(ctx, s, func(tx *Tx) ([]bool, error) {
		changed := make([]bool, len(os))
		for i, o := range os {
			a := o.Attempt
			if _, err := tx.exec(ctx, `INSERT INTO email_attempts (email_id, at, duration_ms, outcome, smtp_code, answer) VALUES ($1, $2, $3, $4, $5, $6)`,
				o.ID, a.At.UTC(), a.DurationMs, a.Outcome, a.SMTPCode, a.Answer); err != nil {
				return nil, fmt.Errorf("record email attempt: %w", err)
			}
			var sentAt *time.Time
			if o.Status == EmailSent {
				sentAt = &a.At
			}
			tried := 0
			if a.Outcome == AttemptTemporary {
				tried = 1
			}
			res, err := tx.exec(ctx, `UPDATE emails SET status = $1, next_attempt_at = $2, sent_at = COALESCE($3, sent_at), tries = tries + $4
				WHERE id = $5 AND generation = $6 AND status = 'queued'`, o.Status, o.NextAttemptAt, sentAt, tried, o.ID, o.Generation)
			if err != nil {
				return nil, fmt.Errorf("record email attempt: %w", err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return nil, err
			}
			changed[i] = n == 1
		}
		return changed, nil
	})
}

// EnqueueEmail inserts the job of an email's generation in tx, the
// transaction that queued it (web/email: the queue's InsertTx).
type EnqueueEmail func(ctx context.Context, tx *sql.Tx, e QueuedEmail) error

// ResendEmail queues an email again, whatever its state, under a new
// generation and Message-ID (a new message, not a retry), audited as
// email.resend; keep (no SMTP configured) keeps it again instead.
// Errors: not_found, validation_failed (its bodies were dropped, or it
// could not be rendered: there is nothing to send).
func (s *Store) ResendEmail(ctx context.Context, id int64, keep bool, domain string, enqueue EnqueueEmail) (*Email, error) {
	err := inTxDo(ctx, s, func(tx *Tx) error {
		var before struct {
			Status     string `db:"status"`
			Generation int64  `db:"generation"`
			Dropped    bool   `db:"bodies_dropped"`
			Unrendered bool   `db:"unrendered"`
		}
		err := tx.get(ctx, &before, `SELECT status, generation, bodies_dropped, text_body = '' AS unrendered FROM emails WHERE id = $1`, id)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("Email", id)
		}
		if err != nil {
			return fmt.Errorf("resend email: %w", err)
		}
		switch {
		case before.Dropped:
			return Errorf(EValidationFailed, "Email %d is older than 90 days: its message is gone and cannot be sent again.", id)
		case before.Unrendered:
			return Errorf(EValidationFailed, "Email %d could not be made when its order changed: there is no message to send.", id)
		}
		gen := before.Generation + 1
		status, sentAt := EmailQueued, (*time.Time)(nil)
		if keep {
			status, sentAt = EmailKept, &tx.now
		}
		if _, err := tx.exec(ctx, `UPDATE emails SET status = $1, generation = $2, message_id = $3, next_attempt_at = NULL, sent_at = $4, tries = 0 WHERE id = $5`,
			status, gen, MessageID(id, gen, domain), sentAt, id); err != nil {
			return fmt.Errorf("resend email: %w", err)
		}
		if keep {
			if _, err := tx.exec(ctx, `INSERT INTO email_attempts (email_id, at, duration_ms, outcome, answer) VALUES ($1, $2, 0, 'kept', $3)`,
				id, tx.now, "Kept in the local outbox: no SMTP server is configured."); err != nil {
				return fmt.Errorf("resend email: %w", err)
			}
		} else if err := enqueue(ctx, tx.Tx.Tx, QueuedEmail{ID: id, Generation: gen}); err != nil {
			return fmt.Errorf("resend email: %w", err)
		}
		return tx.audit(AuditEmailResend, TargetID(auditTargetEmail, id), Changes{"status": {before.Status, status}})
	})
	if err != nil {
		return nil, err
	}
	return s.FindEmailByID(ctx, id)
}

// CountEmails counts the emails in a state (the queued gauge).
func (s *Store) CountEmails(ctx context.Context, status string) (int64, error) {
	var n int64
	if err := s.get(ctx, &n, `SELECT count(*) FROM emails WHERE status = $1`, status); err != nil {
		return 0, fmt.Errorf("count emails: %w", err)
	}
	return n, nil
}

// PurgeEmailBodies empties the bodies of kept and sent emails older than
// EmailBodyRetention, in batches of PurgeBatch; the rows (who, what,
// when, the attempts) stay.
func (s *Store) PurgeEmailBodies(ctx context.Context) (int64, error) {
	cutoff := s.Now().UTC().Add(-EmailBodyRetention)
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		res, err := s.exec(ctx, `UPDATE emails SET text_body = '', html_body = '', bodies_dropped = TRUE
			WHERE id IN (SELECT id FROM emails WHERE status IN ('kept', 'sent') AND NOT bodies_dropped AND created_at < $1 LIMIT $2)`, cutoff, PurgeBatch)
		if err != nil {
			return total, fmt.Errorf("purge email bodies: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("purge email bodies: %w", err)
		}
		total += n
		if n < PurgeBatch {
			return total, nil
		}
	}
}
