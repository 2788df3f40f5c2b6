package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Emails are made by the outbox relay (SPEC §19, issue 39): a checkout, a
// cancel or a completion writes its order events in its own transaction,
// as it always did, and the relay turns the committed events into email
// rows and their jobs in its batch's transaction (web/email). That is the
// guarantee §19 asks of "queued in the same transaction": a committed
// change always makes its email, a rolled-back one never does, and a crash
// between the two loses nothing (the relay's position moves with the rows
// it wrote). The order path pays nothing more than its events.

// EmailLine is one order of an email: what was bought.
type EmailLine struct {
	OrderID    int64      `db:"id"`
	CheckoutID *int64     `db:"checkout_id"`
	PetName    string     `db:"pet_name"`
	Quantity   int64      `db:"quantity"`
	UnitPrice  Money      `db:"unit_price"`
	Total      Money      `db:"total"`
	Currency   string     `db:"currency"`
	ShipDate   *time.Time `db:"ship_date"`
	BuyerName  string     `db:"buyer_name"`
	BuyerEmail string     `db:"buyer_email"`
}

// EmailCheckout is a storefront checkout whose confirmation is due: the
// buyer, the preferred date and every line placed in it.
type EmailCheckout struct {
	ID       int64
	Name     string
	Email    string
	ShipDate *time.Time
	Lines    []EmailLine
	// Traceparent is the span of the change that placed it (its first
	// order.created event in the batch), nil when tracing was off.
	Traceparent *string
}

// Total is what the checkout's lines cost together.
func (c *EmailCheckout) Total() Money {
	var t Money
	for _, l := range c.Lines {
		t += l.Total
	}
	return t
}

// Currency is the checkout's currency (every line has the same).
func (c *EmailCheckout) Currency() string {
	if len(c.Lines) == 0 {
		return ""
	}
	return c.Lines[0].Currency
}

// EmailOrderChange is a storefront order cancelled (Kind EmailLineCancelled)
// or completed (EmailOrderReady).
type EmailOrderChange struct {
	Kind string
	Line EmailLine
	// Traceparent is the span of the change (its event's), nil when
	// tracing was off.
	Traceparent *string
}

// EmailRecipient is a staff user who opted in to new-checkout emails.
type EmailRecipient struct {
	ID       int64  `db:"id"`
	Username string `db:"username"`
	Email    string `db:"email"`
}

// EmailCauses is what a relay batch asks emails of: the shop's settings,
// the checkouts placed, the orders cancelled or completed, and the staff
// users who want a word of each new checkout.
type EmailCauses struct {
	Settings  ShopSettings
	Checkouts []*EmailCheckout
	Changes   []EmailOrderChange
	Staff     []EmailRecipient
}

// Empty reports whether the batch asks no email.
func (c *EmailCauses) Empty() bool { return len(c.Checkouts) == 0 && len(c.Changes) == 0 }

// EmailCauses reads what the batch's committed order events ask emails
// of. Orders placed through the API have no buyer and ask none.
func (b *RelayBatch) EmailCauses(ctx context.Context) (*EmailCauses, error) {
	evs, err := b.Events(ctx)
	if err != nil {
		return nil, err
	}
	var placed, changed []int64
	kinds := map[int64]string{}
	traces := map[int64]*string{} // by order id: the change's span
	for _, e := range evs {
		var ref struct {
			ID       int64     `json:"id"`
			Customer *Customer `json:"customer"`
		}
		switch e.Type {
		case EventOrderCreated, EventOrderCancelled, EventOrderCompleted:
		default:
			continue
		}
		if err := json.Unmarshal(e.Data, &ref); err != nil || ref.Customer == nil {
			continue // not a storefront order (or not an order): no buyer to write to
		}
		if e.Traceparent != nil {
			traces[ref.ID] = e.Traceparent
		}
		switch e.Type {
		case EventOrderCreated:
			placed = append(placed, ref.ID)
		case EventOrderCancelled:
			changed, kinds[ref.ID] = append(changed, ref.ID), EmailLineCancelled
		case EventOrderCompleted:
			changed, kinds[ref.ID] = append(changed, ref.ID), EmailOrderReady
		}
	}
	c := &EmailCauses{}
	if len(placed) == 0 && len(changed) == 0 {
		return c, nil
	}
	tx := b.tx
	if c.Settings, err = tx.shopSettings(ctx); err != nil {
		return nil, err
	}
	if len(changed) > 0 {
		lines, err := tx.emailLines(ctx, "o.id", changed)
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			c.Changes = append(c.Changes, EmailOrderChange{Kind: kinds[l.OrderID], Line: l, Traceparent: traces[l.OrderID]})
		}
	}
	if len(placed) == 0 {
		return c, nil
	}
	// The checkouts of the orders placed, each with every line it placed
	// (a checkout's events may fall in two batches; its email is one).
	mine, err := tx.emailLines(ctx, "o.id", placed)
	if err != nil {
		return nil, err
	}
	var ids []int64
	seen := map[int64]bool{}
	coTrace := map[int64]*string{} // by checkout id
	for _, l := range mine {
		if l.CheckoutID != nil && !seen[*l.CheckoutID] {
			seen[*l.CheckoutID] = true
			ids = append(ids, *l.CheckoutID)
			coTrace[*l.CheckoutID] = traces[l.OrderID]
		}
	}
	if len(ids) == 0 {
		return c, nil
	}
	all, err := tx.emailLines(ctx, "o.checkout_id", ids)
	if err != nil {
		return nil, err
	}
	byID := map[int64]*EmailCheckout{}
	for _, l := range all {
		co := byID[*l.CheckoutID]
		if co == nil {
			co = &EmailCheckout{ID: *l.CheckoutID, Name: l.BuyerName, Email: l.BuyerEmail, Traceparent: coTrace[*l.CheckoutID]}
			co.ShipDate = l.ShipDate
			byID[co.ID] = co
			c.Checkouts = append(c.Checkouts, co)
		}
		co.Lines = append(co.Lines, l)
	}
	err = tx.sel(ctx, &c.Staff, `SELECT id, username, email FROM staff_users
		WHERE notify_orders AND email <> '' AND disabled_at IS NULL ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("email recipients: %w", err)
	}
	return c, nil
}

// emailLines reads the orders whose column col is one of ids, with their
// pet's name, in id order.
func (tx *Tx) emailLines(ctx context.Context, col string, ids []int64) ([]EmailLine, error) {
	cond, arg := idSet(tx.dialect(), col, ids)
	var lines []EmailLine
	err := tx.sel(ctx, &lines, `SELECT o.id, o.checkout_id, COALESCE(p.name, '') AS pet_name, o.quantity, o.unit_price, o.unit_price * o.quantity AS total,
		COALESCE(o.currency, '') AS currency, o.ship_date, ck.name AS buyer_name, ck.email AS buyer_email
		FROM orders o JOIN checkouts ck ON ck.id = o.checkout_id LEFT JOIN pets p ON p.id = o.pet_id WHERE `+cond+` ORDER BY o.id`, arg)
	if err != nil {
		return nil, fmt.Errorf("email lines: %w", err)
	}
	return lines, nil
}

// idSet is a condition "col is one of ids" with its one argument, so the
// statement is the same whatever the number of ids (one cached statement).
func idSet(dialect, col string, ids []int64) (string, string) {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	if dialect == DialectPostgres {
		return col + ` = ANY($1::bigint[])`, "{" + strings.Join(parts, ",") + "}"
	}
	return col + ` IN (SELECT value FROM json_each($1))`, "[" + strings.Join(parts, ",") + "]"
}

// NewEmail is an email the relay (or a test) writes, rendered.
type NewEmail struct {
	Kind, DedupeKey         string
	FromName, ReplyTo       string
	ToName, ToAddr, Subject string
	Text, HTML              string
	// MessageID is made from the row's id when empty: see InsertEmails.
	MessageIDDomain string
	// Keep: no SMTP is configured; the email is kept in the database
	// (status kept) and no job is queued.
	Keep bool
	// Failure, when set, is why the email could not be rendered (for the
	// log): it is written without its parts, failed, with an attempt
	// saying so, and no job is queued.
	Failure string
	// Traceparent is the span of the change that caused it, nil when
	// tracing was off: its send links to it (SPEC §21).
	Traceparent *string
}

// emailUnrendered is the attempt answer of an email that could not be
// rendered: the console shows it; the error itself goes to the log.
const emailUnrendered = "The message could not be made (a rendering error, in the server's log); nothing was sent."

// QueuedEmail names an email row a job must send.
type QueuedEmail struct {
	ID         int64
	Generation int64
}

// InsertEmails writes the batch's emails, each once (an email whose
// dedupe key exists already is skipped), and returns those to send.
func (b *RelayBatch) InsertEmails(ctx context.Context, emails []NewEmail) ([]QueuedEmail, error) {
	return b.tx.insertEmails(ctx, emails)
}

func (tx *Tx) insertEmails(ctx context.Context, emails []NewEmail) ([]QueuedEmail, error) {
	var queued []QueuedEmail
	for _, e := range emails {
		status := EmailQueued
		switch {
		case e.Failure != "":
			status = EmailFailed
		case e.Keep:
			status = EmailKept
		}
		var id int64
		err := tx.get(ctx, &id, `INSERT INTO emails (kind, dedupe_key, from_name, reply_to, to_name, to_addr, subject, text_body, html_body, message_id, status, created_at, sent_at, traceparent)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, '', $10, $11, $12, $13) ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`,
			e.Kind, e.DedupeKey, e.FromName, e.ReplyTo, e.ToName, e.ToAddr, e.Subject, e.Text, e.HTML, status, tx.now, keptAt(status == EmailKept, tx.now), e.Traceparent)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("insert email: %w", err)
		}
		if _, err := tx.exec(ctx, `UPDATE emails SET message_id = $1 WHERE id = $2`, MessageID(id, 0, e.MessageIDDomain), id); err != nil {
			return nil, fmt.Errorf("insert email: %w", err)
		}
		switch status {
		case EmailQueued:
			queued = append(queued, QueuedEmail{ID: id})
		case EmailFailed:
			if _, err := tx.exec(ctx, `INSERT INTO email_attempts (email_id, at, duration_ms, outcome, answer) VALUES ($1, $2, 0, $3, $4)`,
				id, tx.now, AttemptPermanent, emailUnrendered); err != nil {
				return nil, fmt.Errorf("insert email: %w", err)
			}
		}
	}
	return queued, nil
}

// keptAt is when a kept email counts as delivered (to the local outbox).
func keptAt(keep bool, now time.Time) *time.Time {
	if keep {
		return &now
	}
	return nil
}

// MessageID is an email's Message-ID: the same on every attempt of one
// generation (a receiver sees it twice at worst after a crash), a new one
// when staff resend it.
func MessageID(id, generation int64, domain string) string {
	if domain == "" {
		domain = "petstore.invalid"
	}
	return fmt.Sprintf("<email-%d.%d@%s>", id, generation, domain)
}
