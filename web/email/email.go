// Package email writes the shop's emails (SPEC §19): a buyer's
// confirmation, a cancelled line, an order ready, and a word of each new
// checkout to the staff who asked for it. The outbox relay makes them
// from committed order events (Kind.FromEvents: the rows and their jobs
// in the relay batch's transaction), rendered then with the shop's
// settings; a job of the queue (web/queue) sends each over SMTP with
// go-mail, retried on temporary failures for over 24 hours. Without an
// SMTP server the emails are kept in the database (status kept), for the
// console's Emails page to show.
package email

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"petstore/db"
	"petstore/web"
	"petstore/web/queue"
)

// The River job of an email: one attempt, args {"emailId", "generation"}.
const (
	JobKind  = "email_send"
	JobQueue = "email"
)

// Timing of the sends. A job sends the emails of one relay batch, up to
// JobBatch of them, one after another, and starts the next only within
// BatchWindow of its start: so it takes at most JobTimeout (its last
// attempt, after waiting for its turn on a busy instance, plus the
// writing of its outcome), and the emails it had no time for go in its
// next run. A job still running queue.RescueGrace after
// JobTimeout was cut off by a crash and runs again (web/queue), so a
// killed instance's email is sent again within about JobTimeout +
// queue.RescueGrace + queue.RescueEvery of the attempt it cut off.
//
// One job per email cost more than the email on SQLite: River marks each
// job done with a statement of its own, parsed anew each time
// (riversqlite), in the one writer's queue beside the checkouts.
const (
	JobBatch       = 25
	BatchWindow    = 2 * time.Second
	JobTimeout     = SendTimeout + BatchWindow + gateWait + 3*time.Second
	DefaultWorkers = 20
)

// DefaultSchedule is the wait before each retry after a temporary
// failure: nine retries over 27 h 42 min (SPEC §19: at least 24 h), then
// the email is failed.
var DefaultSchedule = []time.Duration{
	30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 12 * time.Hour,
}

// TracerName names the sends' spans.
const TracerName = "petstore/web/email"

// DefaultFrom is PETSTORE_MAIL_FROM's default.
const DefaultFrom = "petstore@localhost"

// Config is what New builds the emails from.
type Config struct {
	Store *db.Store
	// Transport is PETSTORE_SMTP_URL parsed; nil keeps every email in the
	// database (status kept).
	Transport *Transport
	// From is PETSTORE_MAIL_FROM (DefaultFrom when empty).
	From string
	// BaseURL is the shop's address as buyers reach it.
	BaseURL string
	Now     func() time.Time
	Logger  *slog.Logger
	Metrics *Metrics
	// Schedule overrides DefaultSchedule (tests shorten it).
	Schedule []time.Duration
	Workers  int
	// Timeout overrides SendTimeout.
	Timeout time.Duration
	// Load, when set, is the instance's requests in flight: sends give
	// way to them while the instance is busy (gate.go).
	Load *web.Load
	// Tracer, when set, makes a span of each send (SPEC §21); nil is
	// tracing off (a no-op tracer).
	Tracer trace.TracerProvider
}

// Emails is the kind of job that sends emails.
type Emails struct {
	store    *db.Store
	queue    *queue.Queue
	renderer *Renderer
	sender   *Sender // nil: keep
	now      func() time.Time
	logger   *slog.Logger
	metrics  *Metrics
	schedule []time.Duration
	gate     *gate
	tracer   trace.Tracer
}

// sendArgs are a send job's args: the emails of generation 0 the relay
// made (EmailIDs), or one email of a generation (a resend; a job queued
// before EmailIDs existed).
type sendArgs struct {
	EmailID    int64   `json:"emailId,omitempty"`
	Generation int64   `json:"generation"`
	EmailIDs   []int64 `json:"emailIds,omitempty"`
}

// ids are the emails the job sends.
func (a sendArgs) ids() []int64 {
	if len(a.EmailIDs) > 0 {
		return a.EmailIDs
	}
	return []int64{a.EmailID}
}

// Kind is the River kind of the send jobs.
func (sendArgs) Kind() string { return JobKind }

// New registers the emails with q. Errors name a bad From.
func New(q *queue.Queue, cfg Config) (*Emails, error) {
	from := cmp.Or(cfg.From, DefaultFrom)
	a, err := mail.ParseAddress(from)
	if err != nil || a.Name != "" {
		return nil, fmt.Errorf("email: PETSTORE_MAIL_FROM %q is not a plain address (shop@example.com)", from)
	}
	domain := a.Address[strings.LastIndexByte(a.Address, '@')+1:]
	e := &Emails{
		store: cfg.Store, queue: q, now: cfg.Now, logger: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		metrics: cfg.Metrics, schedule: cfg.Schedule, gate: newGate(cfg.Load),
		renderer: &Renderer{BaseURL: cmp.Or(cfg.BaseURL, "http://localhost:8080"), Domain: domain, Keep: cfg.Transport == nil},
	}
	if e.schedule == nil {
		e.schedule = DefaultSchedule
	}
	if e.now == nil {
		e.now = time.Now
	}
	var tp trace.TracerProvider = noop.NewTracerProvider()
	if cfg.Tracer != nil {
		tp = cfg.Tracer
	}
	e.tracer = tp.Tracer(TracerName)
	if cfg.Transport != nil {
		e.sender = &Sender{Transport: cfg.Transport, From: a.Address, Timeout: cfg.Timeout}
	}
	err = queue.Register(q, queue.Kind{
		Queue: JobQueue, Workers: cmp.Or(cfg.Workers, DefaultWorkers), Timeout: cmp.Or(cfg.Timeout, SendTimeout) + JobTimeout - SendTimeout, FromEvents: e.fromEvents,
		Cancelled: cancelled,
	}, e.work)
	if err != nil {
		return nil, fmt.Errorf("email: %w", err)
	}
	return e, nil
}

// Keeping reports whether emails are kept in the database (no SMTP).
func (e *Emails) Keeping() bool { return e.sender == nil }

// fromEvents writes the emails a batch of committed events asks for and
// returns the jobs that send them (queue.Kind.FromEvents).
func (e *Emails) fromEvents(ctx context.Context, b *db.RelayBatch) ([]river.JobArgs, error) {
	causes, err := b.EmailCauses(ctx)
	if err != nil || causes.Empty() {
		return nil, err
	}
	emails, err := e.renderer.Emails(ctx, causes)
	if err != nil {
		return nil, err
	}
	queued, err := b.InsertEmails(ctx, emails)
	if err != nil {
		return nil, err
	}
	for _, m := range emails {
		switch {
		case m.Failure != "":
			e.logger.Error("email: could not be rendered; written as failed", "kind", m.Kind, "dedupeKey", m.DedupeKey, "err", m.Failure)
			e.metrics.unrendered(m.Kind)
		case e.renderer.Keep:
			e.metrics.kept(m.Kind)
		}
	}
	return jobArgs(queued), nil
}

// jobArgs are the jobs of the emails a relay batch queued (all of
// generation 0): one per JobBatch of them.
func jobArgs(qs []db.QueuedEmail) []river.JobArgs {
	var args []river.JobArgs
	for len(qs) > 0 {
		n := min(len(qs), JobBatch)
		ids := make([]int64, n)
		for i, q := range qs[:n] {
			ids[i] = q.ID
		}
		args = append(args, sendArgs{EmailIDs: ids})
		qs = qs[n:]
	}
	return args
}

// cancelled fails the emails of a job staff cancelled on the Jobs page
// (queue.Kind.Cancelled): no attempt of them comes any more.
func cancelled(ctx context.Context, jt *db.JobTx, args []byte) error {
	var a sendArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return fmt.Errorf("email: job args: %w", err)
	}
	for _, id := range a.ids() {
		if err := jt.StopEmail(ctx, id, a.Generation); err != nil {
			return err
		}
	}
	return nil
}

// work makes one attempt at each of the job's emails still to send, the
// next one only while the job is within BatchWindow of its start, then
// records them together. While one stays queued (a temporary failure; the
// emails a run failed together are due together) or was not reached, the
// job is snoozed until the next attempt is due. River's own retries are
// left to failures to record an attempt (the database gone).
func (e *Emails) work(ctx context.Context, job *river.Job[sendArgs]) error {
	if e.sender == nil { // queued by an instance with SMTP; this one has none
		return river.JobSnooze(time.Minute)
	}
	began := e.now()
	var (
		tried []db.EmailOutcome
		kinds []string
		waits []time.Duration
		took  []time.Duration
		tries []int         // each attempt's number for its email
		rest  time.Duration // the snooze of the emails not reached; 0: all were
		err   error
	)
	for i, id := range job.Args.ids() {
		if i > 0 && e.now().Sub(began) > BatchWindow {
			rest = time.Millisecond
			break
		}
		var m *db.Email
		if m, err = e.store.EmailToSend(ctx, id, job.Args.Generation); err != nil {
			break
		}
		if m == nil {
			continue
		}
		if !e.gate.admit(ctx, e.now().Sub(m.CreatedAt)) {
			rest = busySnooze
			break
		}
		o, wait, d := e.attempt(ctx, m)
		tried, kinds, waits, took = append(tried, o), append(kinds, m.Kind), append(waits, wait), append(took, d)
		tries = append(tries, m.Tries+1)
	}
	// The outcomes are written whatever the job's context says: an
	// attempt made is recorded even when shutdown cut the wait short.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	changed, rerr := e.store.RecordEmailAttempts(rctx, tried)
	if rerr != nil {
		return rerr
	}
	retry := time.Duration(0)
	for i, o := range tried {
		e.metrics.attempted(kinds[i], o.Status, took[i])
		if a := o.Attempt; a.Outcome != db.AttemptSent {
			code := 0
			if a.SMTPCode != nil {
				code = *a.SMTPCode
			}
			e.logger.Info("email attempt failed", "emailId", o.ID, "outcome", a.Outcome, "code", code, "status", o.Status)
		}
		if changed[i] && o.Status == db.EmailQueued {
			retry = max(retry, waits[i])
			// Snoozed, not failed: the failure is noted for the Jobs page.
			cause := o.Attempt.Outcome
			if c := o.Attempt.SMTPCode; c != nil {
				cause += " " + strconv.Itoa(*c)
			}
			queue.RecordFailure(ctx, tries[i], cause)
		}
	}
	switch {
	case err != nil:
		return err
	case retry > 0 || rest > 0:
		return river.JobSnooze(max(retry, rest))
	}
	return nil
}

// attempt makes one attempt at m and says what it decided: the email's
// outcome, the wait before its next attempt when it stays queued, and
// how long the attempt took.
func (e *Emails) attempt(ctx context.Context, m *db.Email) (db.EmailOutcome, time.Duration, time.Duration) {
	start := e.now()
	// The send's span links to the change that caused the email; the
	// message carries its traceparent (Sender.message).
	sctx, span, _ := web.StartCaused(ctx, e.tracer, "email.send", m.Traceparent,
		attribute.Int64("petstore.email.id", m.ID), attribute.String("petstore.email.kind", m.Kind))
	r := e.sender.Send(sctx, m)
	took := e.now().Sub(start)
	span.SetAttributes(attribute.String("petstore.email.outcome", r.Outcome))
	if r.Outcome != db.AttemptSent {
		span.SetStatus(codes.Error, r.Outcome)
	}
	span.End()
	o := db.EmailOutcome{ID: m.ID, Generation: m.Generation,
		Attempt: db.EmailAttempt{At: start, DurationMs: took.Milliseconds(), Outcome: r.Outcome, Answer: r.Answer}}
	if r.Code != 0 {
		code := r.Code
		o.Attempt.SMTPCode = &code
	}
	var wait time.Duration
	switch r.Outcome {
	case db.AttemptSent:
		o.Status = db.EmailSent
	case db.AttemptPermanent:
		o.Status = db.EmailFailed
	default:
		if m.Tries >= len(e.schedule) { // the temporary failures before this one
			o.Status = db.EmailFailed
			break
		}
		wait = e.schedule[m.Tries]
		next := start.Add(wait)
		o.Status, o.NextAttemptAt = db.EmailQueued, &next
	}
	return o, wait, took
}

// Resend queues an email again (a new Message-ID), or keeps it again
// without SMTP; audited as email.resend. Errors: not_found,
// validation_failed (its bodies were dropped, or it was never rendered).
func (e *Emails) Resend(ctx context.Context, id int64) (*db.Email, error) {
	return e.store.ResendEmail(ctx, id, e.sender == nil, e.renderer.Domain, func(ctx context.Context, tx *sql.Tx, q db.QueuedEmail) error {
		return e.queue.InsertTx(ctx, tx, sendArgs{EmailID: q.ID, Generation: q.Generation})
	})
}
