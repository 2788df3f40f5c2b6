package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
	"petstore/web/queue"
	"petstore/web/webhooks"
)

// TestConsoleJobs walks the Jobs page on both databases: a webhook whose
// receiver answers 500 leaves a failed job that the page lists with its
// error and attempts; Retry runs it at once (the receiver gets the
// request again, an hour before its next attempt was due); Cancel stops
// it (River's state cancelled, listed so, nothing more to cancel, the
// delivery failed in the webhook's log); both
// are audited; the counts by queue and state follow; a job that does not
// exist is refused; a clerk gets the 403 page and no menu entry.
func TestConsoleJobs(t *testing.T) {
	dbtest.EachInTurn(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		ctx := context.Background()

		hits := make(chan string, 16)
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits <- r.Header.Get("webhook-id")
			w.WriteHeader(http.StatusInternalServerError)
		}))
		defer receiver.Close()
		var hook struct {
			ID int64 `json:"id"`
		}
		a.Do(handlerstest.Req{Method: http.MethodPost, Path: "/api/webhooks", Key: a.Staff,
			Body: map[string]any{"url": receiver.URL + "/hook", "events": []string{"*"}}}).Want(t, http.StatusCreated).Decode(t, &hook)

		// A queue that works the deliveries (the app's own is never
		// started in handler tests), reaching the loopback receiver; each
		// failure waits an hour, so only Retry runs the job again.
		q := queue.New(a.Store, queue.Config{PollInterval: 50 * time.Millisecond, RelayPoll: 50 * time.Millisecond})
		if _, err := webhooks.New(q, webhooks.Config{Store: a.Store, Now: a.Clock.Now, AllowPrivate: true,
			Schedule: []time.Duration{time.Hour, time.Hour, time.Hour}}); err != nil {
			t.Fatal(err)
		}
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = q.Stop(ctx) }()

		b := a.SignedIn(t)
		p := b.Get("/staff/jobs").WantStatus(http.StatusOK)
		if p.ID("nav-jobs").Length() != 1 || p.ID("failure-row").Length() != 0 {
			t.Fatalf("empty page: nav %d, failures %d", p.ID("nav-jobs").Length(), p.ID("failure-row").Length())
		}
		if got := queueRow(p, webhooks.JobQueue).Length(); got != 1 {
			t.Fatalf("queue rows for %s = %d, want 1 (every registered queue, even empty)", webhooks.JobQueue, got)
		}

		b.Post("/staff/webhooks/"+handlerstest.Itoa(hook.ID)+"/test", nil).WantStatus(http.StatusSeeOther)
		first := waitHit(t, hits)

		// The attempt failed and the job waits an hour: the page lists it.
		row := waitFailure(t, b, func(r failure) bool { return r.Attempts == "1" })
		if row.Error != "http_status 500" || row.State != "scheduled" || row.Queue != webhooks.JobQueue {
			t.Fatalf("failed job = %+v, want http_status 500, scheduled, in %s", row, webhooks.JobQueue)
		}
		p = b.Get("/staff/jobs")
		if got := browsertest.Text(queueRow(p, webhooks.JobQueue).Find(`[data-testid="count-scheduled"]`)); got != "1" {
			t.Errorf("scheduled count = %q, want 1", got)
		}

		// Retry: it runs now, the same delivery again.
		p = b.Follow(b.Post("/staff/jobs/"+row.ID+"/retry", nil).WantStatus(http.StatusSeeOther)).WantStatus(http.StatusOK)
		if got := p.Text("flash"); !strings.Contains(got, "will run again") {
			t.Errorf("flash after retry = %q", got)
		}
		if again := waitHit(t, hits); again != first {
			t.Errorf("retried delivery's webhook-id = %q, want %q", again, first)
		}
		row = waitFailure(t, b, func(r failure) bool { return r.Attempts == "2" })
		if row.State != "scheduled" {
			t.Fatalf("after the retry's failure: %+v", row)
		}

		// Cancel: River never runs it again.
		p = b.Follow(b.Post("/staff/jobs/"+row.ID+"/cancel", nil).WantStatus(http.StatusSeeOther)).WantStatus(http.StatusOK)
		if got := p.Text("flash"); !strings.Contains(got, "cancelled") {
			t.Errorf("flash after cancel = %q", got)
		}
		fs, err := a.Handler.Queue.Failures(ctx, 50)
		if err != nil || len(fs) != 1 || fs[0].State != "cancelled" || fs[0].CanCancel {
			t.Fatalf("after cancel: %+v (%v), want one job, cancelled", fs, err)
		}
		p = b.Get("/staff/jobs")
		if got := p.Text("job-state"); got != "cancelled" || p.ID("cancel-job").Length() != 0 {
			t.Errorf("page after cancel: state %q, cancel buttons %d", got, p.ID("cancel-job").Length())
		}
		if got := browsertest.Text(queueRow(p, webhooks.JobQueue).Find(`[data-testid="count-cancelled"]`)); got != "1" {
			t.Errorf("cancelled count = %q, want 1", got)
		}
		select {
		case id := <-hits:
			t.Errorf("the cancelled job ran again (%s)", id)
		default:
		}
		// The delivery is failed with it: the webhook's log says so.
		ds, _, err := a.Store.FindWebhookDeliveries(ctx, db.DeliveryFilter{WebhookID: hook.ID})
		if err != nil || len(ds) != 1 || ds[0].Status != db.DeliveryFailed || ds[0].NextAttemptAt != nil {
			t.Fatalf("deliveries after the cancel: %+v (%v), want one, failed, no next attempt", ds, err)
		}

		// Both audited, with the job's state before and after.
		for action, want := range map[string][2]string{db.AuditJobRetry: {"scheduled", "available"}, db.AuditJobCancel: {"scheduled", "cancelled"}} {
			es, _, err := a.Store.FindAudit(ctx, db.AuditFilter{Action: action}, db.Page{Limit: 10})
			if err != nil || len(es) != 1 || es[0].Target.ID != row.ID || es[0].Actor.Type != db.ActorStaff {
				t.Fatalf("%s entries = %+v (%v)", action, es, err)
			}
			var ch map[string][2]string
			if err := json.Unmarshal(es[0].Changes, &ch); err != nil || ch["state"] != want {
				t.Errorf("%s changes = %s, want state %v", action, es[0].Changes, want)
			}
		}

		// A job that does not exist, and one that is not a number.
		p = b.Post("/staff/jobs/999999/retry", nil).WantStatus(http.StatusNotFound)
		if got := p.Text("error-message"); got != "Job 999999 not found." {
			t.Errorf("a missing job: %q", got)
		}
		if got := b.Post("/staff/jobs/x'1/cancel", nil).Status; got >= 500 {
			t.Errorf("a hostile id answered %d", got)
		}

		// A clerk: no menu entry, 403 on the page and its forms.
		clerk, _ := a.SignInAs(t, "clara", db.RoleClerk)
		if p := clerk.Get("/staff"); p.ID("nav-jobs").Length() != 0 {
			t.Errorf("a clerk's menu links to the Jobs page")
		}
		clerk.Get("/staff/jobs").WantStatus(http.StatusForbidden)
		clerk.Post("/staff/jobs/"+row.ID+"/retry", nil).WantStatus(http.StatusForbidden)
		if n := handlerstest.CountRows(t, a, "audit_log WHERE action LIKE 'job.%'"); n != 2 {
			t.Errorf("job audit entries = %d, want 2 (the clerk's refused)", n)
		}
	})
}

// failure is a row of the page's failed jobs.
type failure struct{ ID, Queue, State, Attempts, Error string }

// waitFailure reloads the Jobs page until its one failed job matches ok.
func waitFailure(t *testing.T, b *handlerstest.Browser, ok func(failure) bool) failure {
	t.Helper()
	var last failure
	for range 3000 {
		p := b.Get("/staff/jobs").WantStatus(http.StatusOK)
		if rows := p.ID("failure-row"); rows.Length() == 1 {
			id, _ := rows.Attr("data-job-id")
			last = failure{ID: id, Queue: strings.TrimSpace(rows.Find(`td[data-label="Queue"]`).Text()),
				State: p.Text("job-state"), Attempts: p.Text("job-attempts"), Error: p.Text("job-error")}
			if ok(last) {
				return last
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no such failed job within a minute; last %+v", last)
	return last
}

// waitHit waits for the receiver's next request and returns its webhook-id.
func waitHit(t *testing.T, hits <-chan string) string {
	t.Helper()
	select {
	case id := <-hits:
		return id
	case <-time.After(time.Minute):
		t.Fatal("the receiver got no request within a minute")
		return ""
	}
}

// queueRow is the page's row of queue name.
func queueRow(p *browsertest.Page, name string) *goquery.Selection {
	return p.Find(`[data-testid="queue-row"][data-queue="` + name + `"]`)
}
