package db_test

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// mustCreateWebhook adds an endpoint subscribed to events or fails the test.
func mustCreateWebhook(tb testing.TB, ctx context.Context, s *db.Store, url string, events ...string) *db.Webhook {
	tb.Helper()
	w, err := s.CreateWebhook(ctx, db.NewWebhook{URL: &url, Events: &events})
	if err != nil {
		tb.Fatalf("create webhook %s: %v", url, err)
	}
	return w
}

// count counts rows of a table matching cond straight from the database.
func count(tb testing.TB, s *db.Store, table, cond string, args ...any) int {
	tb.Helper()
	var n int
	if err := s.DB().GetContext(context.Background(), &n, `SELECT count(*) FROM `+table+` WHERE `+cond, args...); err != nil {
		tb.Fatalf("count %s: %v", table, err)
	}
	return n
}

// jobLog records the delivery jobs the store asks to queue, in place of
// web/webhooks, which inserts them as River jobs in the same transaction.
type jobLog struct{ jobs []db.DeliveryJob }

func (l *jobLog) enqueue(_ context.Context, tx *sql.Tx, jobs []db.DeliveryJob) error {
	if tx == nil {
		return errors.New("no transaction to queue the jobs in")
	}
	l.jobs = append(l.jobs, jobs...)
	return nil
}

// relay runs the relay until it is caught up, making the deliveries of the
// events committed since it last ran, and returns their jobs.
func relay(tb testing.TB, s *db.Store) []db.DeliveryJob {
	tb.Helper()
	var jobs []db.DeliveryJob
	for {
		run, err := s.RelayEvents(context.Background(), 100, func(ctx context.Context, b *db.RelayBatch) error {
			more, err := b.CreateWebhookDeliveries(ctx)
			jobs = append(jobs, more...)
			return err
		})
		if err != nil {
			tb.Fatalf("relay: %v", err)
		}
		if run.Events == 0 && !run.Held {
			return jobs
		}
	}
}

// webhookStore opens a fresh store on a clock of its own with one endpoint
// subscribed to every event.
func webhookStore(t *testing.T, open dbtest.Open) (*db.Store, *dbtest.Clock, *db.Webhook) {
	t.Helper()
	s := open(t)
	clock := dbtest.NewClock(t)
	s.Now = clock.Now
	return s, clock, mustCreateWebhook(t, context.Background(), s, "https://example.com/hook", "*")
}

func TestWebhookCRUD(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		for _, c := range []struct {
			name, url string
			events    []string
			field     string
		}{
			{"ErrURLScheme", "ftp://example.com/hook", []string{"*"}, "url"},
			{"ErrURLRelative", "/hook", []string{"*"}, "url"},
			{"ErrURLUserInfo", "https://user:pw@example.com/hook", []string{"*"}, "url"},
			{"ErrURLLong", "https://example.com/" + strings.Repeat("a", 2000), []string{"*"}, "url"},
			{"ErrEventsEmpty", "https://example.com/hook", []string{}, "events"},
			{"ErrEventsStarAndMore", "https://example.com/hook", []string{"*", "pet.created"}, "events"},
			{"ErrEventsUnknown", "https://example.com/hook", []string{"pet.eaten"}, "events"},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := s.CreateWebhook(ctx, db.NewWebhook{URL: &c.url, Events: &c.events})
				wantCode(t, err, db.EValidationFailed)
				if d := err.(*db.Error).Details; len(d) != 1 || d[0].Field != c.field {
					t.Fatalf("details = %+v, want one for %s", d, c.field)
				}
			})
		}

		w := mustCreateWebhook(t, ctx, s, "https://example.com/hook", "order.created", "pet.created", "order.created")
		if !strings.HasPrefix(w.Secret, db.WebhookSecretPrefix) || len(w.Secret) != len(db.WebhookSecretPrefix)+44 {
			t.Fatalf("secret %q is not whsec_ + base64 of 32 bytes", w.Secret)
		}
		if got := strings.Join(w.Events, ","); got != "order.created,pet.created" {
			t.Fatalf("events = %s, want sorted without repeats", got)
		}
		got, err := s.FindWebhookByID(ctx, w.ID)
		if err != nil || !got.Enabled || got.URL != w.URL || strings.Join(got.Events, ",") != "order.created,pet.created" {
			t.Fatalf("find = %+v, %v", got, err)
		}

		desc, off := "stock sync", false
		events := []string{"*"}
		up, err := s.UpdateWebhook(ctx, w.ID, db.WebhookUpdate{Description: &desc, Enabled: &off, Events: &events})
		if err != nil || up.Enabled || up.Description != desc || strings.Join(up.Events, ",") != "*" || up.DisabledReason != nil {
			t.Fatalf("update = %+v, %v", up, err)
		}
		_, err = s.UpdateWebhook(ctx, w.ID+100, db.WebhookUpdate{Description: &desc})
		wantCode(t, err, db.ENotFound)

		rot, err := s.RotateWebhookSecret(ctx, w.ID)
		if err != nil || rot.Secret == w.Secret {
			t.Fatalf("rotate = %+v, %v", rot, err)
		}
		now := s.Now()
		if got := rot.Secrets(now); len(got) != 2 || got[0] != rot.Secret || got[1] != w.Secret {
			t.Fatalf("secrets after rotation = %v, want the new then the old", got)
		}
		if got := rot.Secrets(now.Add(db.WebhookOldSecretTTL)); len(got) != 1 {
			t.Fatalf("secrets 24 h after rotation = %v, want the new one alone", got)
		}

		for i := 1; i < db.MaxWebhooks; i++ {
			mustCreateWebhook(t, ctx, s, "https://example.com/more", "*")
		}
		_, err = s.CreateWebhook(ctx, db.NewWebhook{URL: ptr("https://example.com/one-too-many"), Events: &events})
		wantCode(t, err, db.ETooManyWebhooks)

		if err := s.DeleteWebhook(ctx, w.ID); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.DeleteWebhook(ctx, w.ID), db.ENotFound)
		_, err = s.FindWebhookByID(ctx, w.ID)
		wantCode(t, err, db.ENotFound)
		ws, err := s.FindWebhooks(ctx)
		if err != nil || len(ws) != db.MaxWebhooks-1 {
			t.Fatalf("list = %d webhooks, %v", len(ws), err)
		}
	})
}

// TestWebhookDeliveriesWithTheEvent: the relay makes deliveries of
// committed events, and asks for their jobs, one per event and enabled
// endpoint subscribed to its type: for a lone API order (on PostgreSQL one
// statement, no Tx) and a checkout of two lines; a refused order and a
// checkout rolled back by its second line queue nothing.
func TestWebhookDeliveriesWithTheEvent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s, rex := storeWithPet(t, open, 10)
		orders := mustCreateWebhook(t, ctx, s, "https://example.com/orders", db.EventOrderCreated)
		all := mustCreateWebhook(t, ctx, s, "https://example.com/all", "*")
		pets := mustCreateWebhook(t, ctx, s, "https://example.com/pets", db.EventPetCreated)
		off := mustCreateWebhook(t, ctx, s, "https://example.com/off", "*")
		if _, err := s.UpdateWebhook(ctx, off.ID, db.WebhookUpdate{Enabled: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		deliveries := func(w *db.Webhook) int {
			return count(t, s, "webhook_deliveries", "webhook_id = $1", w.ID)
		}
		relay(t, s) // the pet's events, before any endpoint
		queued := 0
		jobs := func() int { queued += len(relay(t, s)); return queued }

		o := mustOrder(t, ctx, s, db.Owner{APIKeyID: 0}, rex.ID, 1)
		if n := deliveries(all); n != 0 {
			t.Fatalf("%d deliveries before the relay ran", n)
		}
		if got := jobs(); got != 3 {
			t.Fatalf("jobs = %d, want one per delivery (3)", got)
		}
		if got := []int{deliveries(orders), deliveries(all), deliveries(pets), deliveries(off)}; got[0] != 1 || got[1] != 2 || got[2] != 0 || got[3] != 0 {
			t.Fatalf("deliveries per endpoint after one order = %v, want [1 2 0 0]", got)
		}
		ds, _, err := s.FindWebhookDeliveries(ctx, db.DeliveryFilter{WebhookID: orders.ID})
		if err != nil || len(ds) != 1 {
			t.Fatalf("deliveries = %v, %v", ds, err)
		}
		d := ds[0]
		if d.EventType != db.EventOrderCreated || d.Status != db.DeliveryPending || d.NextAttemptAt == nil || len(d.Attempts) != 0 {
			t.Fatalf("delivery = %+v", d)
		}
		body, err := d.Body()
		if err != nil || !strings.Contains(string(body), `"type":"order.created"`) || !strings.Contains(string(body), `"data":{"id":`+strconv.FormatInt(o.ID, 10)) {
			t.Fatalf("body = %s, %v", body, err)
		}

		_, err = s.PlaceOrder(ctx, db.Owner{}, db.NewOrder{PetID: &rex.ID, Quantity: ptr(int64(100))})
		wantCode(t, err, db.EInsufficientStock)
		_, err = s.PlaceCheckout(ctx, "shopper", 1000, buyer, []db.NewOrder{{PetID: &rex.ID, Quantity: ptr(int64(1))}, {PetID: &rex.ID, Quantity: ptr(int64(100))}})
		wantCode(t, err, db.EInsufficientStock)
		if got := jobs(); got != 3 || deliveries(orders) != 1 || deliveries(all) != 2 {
			t.Fatalf("after refused orders: %d jobs, deliveries %d and %d; want nothing new", got, deliveries(orders), deliveries(all))
		}

		if _, err := s.PlaceCheckout(ctx, "shopper", 1000, buyer, []db.NewOrder{{PetID: &rex.ID, Quantity: ptr(int64(1))}, {PetID: &rex.ID, Quantity: ptr(int64(2))}}); err != nil {
			t.Fatal(err)
		}
		if got := jobs(); got != count(t, s, "webhook_deliveries", "1 = 1") {
			t.Fatalf("jobs = %d, want one per delivery", got)
		}
		if got := deliveries(orders); got != 3 {
			t.Fatalf("deliveries of order.created after a checkout of two = %d, want 3", got)
		}
	})
}

// TestWebhookAttemptRules: what an attempt finds and what its outcome
// writes, without the queue: a retry's new generation makes the older
// job's attempt nothing, a 410 disables at once, three days of failures
// disable, a success ends the streak, and a disabled endpoint's delivery
// fails without an attempt.
func TestWebhookAttemptRules(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s, clock, w := webhookStore(t, open)
		var log jobLog
		test := func() *db.WebhookDelivery {
			d, err := s.QueueWebhookTest(ctx, w.ID, log.enqueue)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		fail := func(d *db.WebhookDelivery, gen int64, gone bool) string {
			t.Helper()
			status, next := db.DeliveryPending, clock.Now().Add(time.Minute)
			code := 500
			if gone {
				status, code = db.DeliveryFailed, 410
			}
			reason, err := s.RecordWebhookAttempt(ctx, db.WebhookAttemptResult{
				DeliveryID: d.ID, WebhookID: w.ID, Generation: gen, Status: status, NextAttemptAt: &next, Gone: gone,
				Attempt: db.WebhookAttempt{At: clock.Now(), DurationMs: 12, HTTPStatus: &code, Error: ptr(db.AttemptHTTPStatus)},
				Snippet: ptr("oops"),
			})
			if err != nil {
				t.Fatal(err)
			}
			return reason
		}

		d := test()
		if len(log.jobs) != 1 || log.jobs[0] != (db.DeliveryJob{DeliveryID: d.ID}) {
			t.Fatalf("jobs of a test = %v, want delivery %d's generation 0", log.jobs, d.ID)
		}
		send, err := s.PrepareWebhookAttempt(ctx, d.ID, 0)
		if err != nil || send == nil || send.URL != w.URL || send.Attempts != 0 || len(send.Secrets) != 1 || send.Secrets[0] != w.Secret {
			t.Fatalf("prepare = %+v, %v", send, err)
		}
		if reason := fail(d, 0, false); reason != "" {
			t.Fatalf("first failure disabled the endpoint: %s", reason)
		}
		if send, _ := s.PrepareWebhookAttempt(ctx, d.ID, 0); send == nil || send.Attempts != 1 {
			t.Fatalf("after one attempt: %+v", send)
		}

		// A retry: generation 1; the job of generation 0 finds nothing.
		r, err := s.RetryWebhookDelivery(ctx, w.ID, d.ID, log.enqueue)
		if err != nil || r.Status != db.DeliveryPending || len(r.Attempts) != 1 || *r.ResponseSnippet != "oops" {
			t.Fatalf("retry = %+v, %v", r, err)
		}
		if send, _ := s.PrepareWebhookAttempt(ctx, d.ID, 0); send != nil {
			t.Fatal("the job of the older generation still found work")
		}
		if len(log.jobs) != 2 || log.jobs[1] != (db.DeliveryJob{DeliveryID: d.ID, Generation: 1}) {
			t.Fatalf("jobs after a retry = %v, want a second one of generation 1", log.jobs)
		}

		// Three days of failures disable the endpoint; not a minute less.
		clock.Add(db.WebhookFailingLimit - time.Minute)
		if reason := fail(d, 1, false); reason != "" {
			t.Fatalf("disabled after less than 3 days: %s", reason)
		}
		clock.Add(time.Minute)
		if reason := fail(d, 1, false); reason != db.ReasonFailing {
			t.Fatalf("after 3 days of failures: reason %q, want %q", reason, db.ReasonFailing)
		}
		got, _ := s.FindWebhookByID(ctx, w.ID)
		if got.Enabled || got.DisabledReason == nil || *got.DisabledReason != db.ReasonFailing {
			t.Fatalf("webhook = %+v, want disabled with a reason", got)
		}
		// Its pending delivery fails without an attempt; no test or retry.
		if send, _ := s.PrepareWebhookAttempt(ctx, d.ID, 1); send != nil {
			t.Fatal("a disabled endpoint's delivery was prepared")
		}
		if d, _ := s.FindWebhookDelivery(ctx, w.ID, d.ID); d.Status != db.DeliveryFailed || d.NextAttemptAt != nil || len(d.Attempts) != 3 {
			t.Fatalf("delivery of a disabled endpoint = %+v", d)
		}
		_, err = s.QueueWebhookTest(ctx, w.ID, log.enqueue)
		wantCode(t, err, db.EWebhookDisabled)
		_, err = s.RetryWebhookDelivery(ctx, w.ID, d.ID, log.enqueue)
		wantCode(t, err, db.EWebhookDisabled)
		if len(log.jobs) != 2 {
			t.Fatalf("refused test and retry queued jobs: %v", log.jobs[2:])
		}

		// Enabled again: the streak starts over; a success ends one; a 410
		// disables at once.
		if _, err := s.UpdateWebhook(ctx, w.ID, db.WebhookUpdate{Enabled: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		d = test()
		if reason := fail(d, 0, false); reason != "" {
			t.Fatalf("enabling did not end the streak: %s", reason)
		}
		ok := 204
		if _, err := s.RecordWebhookAttempt(ctx, db.WebhookAttemptResult{DeliveryID: d.ID, WebhookID: w.ID, Status: db.DeliverySucceeded,
			Attempt: db.WebhookAttempt{At: clock.Now(), HTTPStatus: &ok}}); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.FindWebhookByID(ctx, w.ID); got.FailingSince != nil {
			t.Fatalf("a success left the streak at %v", got.FailingSince)
		}
		d = test()
		if reason := fail(d, 0, true); reason != db.ReasonGone {
			t.Fatalf("410: reason %q, want %q", reason, db.ReasonGone)
		}
	})
}

// TestWebhookDeliveryListAndPurge: newest first, paged, filtered by status;
// housekeeping drops deliveries after 30 days with their attempts.
func TestWebhookDeliveryListAndPurge(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s, clock, w := webhookStore(t, open)
		var ids []int64
		for range 5 {
			d, err := s.QueueWebhookTest(ctx, w.ID, (&jobLog{}).enqueue)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, d.ID)
		}
		ok := 200
		if _, err := s.RecordWebhookAttempt(ctx, db.WebhookAttemptResult{DeliveryID: ids[1], WebhookID: w.ID, Status: db.DeliverySucceeded,
			Attempt: db.WebhookAttempt{At: clock.Now(), HTTPStatus: &ok}}); err != nil {
			t.Fatal(err)
		}
		page, more, err := s.FindWebhookDeliveries(ctx, db.DeliveryFilter{WebhookID: w.ID, Page: db.Page{Limit: 2}})
		if err != nil || !more || len(page) != 2 || page[0].ID != ids[4] || page[1].ID != ids[3] {
			t.Fatalf("first page = %v more=%v %v", page, more, err)
		}
		page, _, _ = s.FindWebhookDeliveries(ctx, db.DeliveryFilter{WebhookID: w.ID, Page: db.Page{Limit: 2, AfterID: ids[3]}})
		if len(page) != 2 || page[0].ID != ids[2] {
			t.Fatalf("second page = %v", page)
		}
		page, _, _ = s.FindWebhookDeliveries(ctx, db.DeliveryFilter{WebhookID: w.ID, Status: db.DeliverySucceeded})
		if len(page) != 1 || page[0].ID != ids[1] || len(page[0].Attempts) != 1 || page[0].NextAttemptAt != nil {
			t.Fatalf("succeeded = %+v", page)
		}
		_, _, err = s.FindWebhookDeliveries(ctx, db.DeliveryFilter{WebhookID: w.ID, Status: "lost"})
		wantCode(t, err, db.EValidationFailed)
		_, _, err = s.FindWebhookDeliveries(ctx, db.DeliveryFilter{WebhookID: w.ID + 1})
		wantCode(t, err, db.ENotFound)

		clock.Add(db.WebhookDeliveryRetention + time.Second)
		n, err := s.PurgeWebhookDeliveries(ctx)
		if err != nil || n != 5 {
			t.Fatalf("purged %d, %v; want 5", n, err)
		}
		if got := count(t, s, "webhook_attempts", "1 = 1"); got != 0 {
			t.Fatalf("%d attempts outlived their deliveries", got)
		}
	})
}
