package webhooks

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web/openapi"
	"petstore/web/queue"
)

// hit is one request a test receiver got.
type hit struct {
	header http.Header
	body   []byte
}

// recorder is a receiver that keeps every request and answers with the
// status answer picks for the n-th one (from 1). Every request must hold to
// the OpenAPI document's webhook callback.
type recorder struct {
	mu   sync.Mutex
	hits []hit
}

func (r *recorder) serve(t *testing.T, answer func(n int) int) string {
	t.Helper()
	contract, err := openapi.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := receiver(t, func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		if err := contract.CheckWebhook(req.Header, b); err != nil {
			t.Errorf("%s breaks the OpenAPI contract: %v", b, err)
		}
		r.mu.Lock()
		r.hits = append(r.hits, hit{req.Header.Clone(), b})
		n := len(r.hits)
		r.mu.Unlock()
		w.WriteHeader(answer(n))
	})
	return srv.URL
}

func (r *recorder) got() []hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hit(nil), r.hits...)
}

// startQueue runs a queue working the deliveries on s until the test
// ends, with a schedule of 100 ms waits.
func startQueue(t *testing.T, s *db.Store) *Deliveries {
	t.Helper()
	q := queue.New(s, queue.Config{PollInterval: 50 * time.Millisecond})
	d, err := New(q, Config{
		Store: s, Now: s.Now, AllowPrivate: true,
		Schedule: []time.Duration{100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := q.Stop(ctx); err != nil {
			t.Errorf("stop queue: %v", err)
		}
	})
	return d
}

// waitDelivery waits until the endpoint's newest delivery is no longer
// pending and returns it.
func waitDelivery(t *testing.T, s *db.Store, webhookID int64) *db.WebhookDelivery {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ds, _, err := s.FindWebhookDeliveries(context.Background(), db.DeliveryFilter{WebhookID: webhookID})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) > 0 && ds[0].Status != db.DeliveryPending {
			return ds[0]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no delivery finished within 20 s")
	return nil
}

// TestQueueDeliversAnOrderSigned: an order placed reaches the subscribed
// endpoint, once, signed (checked with the test's own HMAC), its body the
// event and its webhook-id the delivery's id.
func TestQueueDeliversAnOrderSigned(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		var rec recorder
		url := rec.serve(t, func(int) int { return http.StatusOK })
		events := []string{db.EventOrderCreated}
		w, err := s.CreateWebhook(ctx, db.NewWebhook{URL: &url, Events: &events})
		if err != nil {
			t.Fatal(err)
		}
		cat, err := s.CreateCategory(ctx, db.NewCategory{Name: ptr("Dogs")})
		if err != nil {
			t.Fatal(err)
		}
		pet, err := s.CreatePet(ctx, db.NewPet{Name: ptr("Rex"), CategoryID: &cat.ID})
		if err != nil {
			t.Fatal(err)
		}
		startQueue(t, s)
		o, err := s.PlaceOrder(ctx, db.Owner{}, db.NewOrder{PetID: &pet.ID, Quantity: ptr(int64(1))})
		if err != nil {
			t.Fatal(err)
		}
		d := waitDelivery(t, s, w.ID)
		if d.Status != db.DeliverySucceeded || len(d.Attempts) != 1 || *d.Attempts[0].HTTPStatus != 200 {
			t.Fatalf("delivery = %+v", d)
		}
		hits := rec.got()
		if len(hits) != 1 {
			t.Fatalf("receiver got %d requests, want 1", len(hits))
		}
		h := hits[0]
		ts, _ := strconv.ParseInt(h.header.Get("webhook-timestamp"), 10, 64)
		if h.header.Get("webhook-id") != strconv.FormatInt(d.ID, 10) || ts != d.Attempts[0].At.Unix() {
			t.Fatalf("webhook-id %q, timestamp %d; delivery %d attempted at %v", h.header.Get("webhook-id"), ts, d.ID, d.Attempts[0].At)
		}
		if !verify(t, w.Secret, h.header.Get("webhook-id"), ts, h.body, h.header.Get("webhook-signature")) {
			t.Fatalf("signature %q does not verify", h.header.Get("webhook-signature"))
		}
		var body struct {
			ID        int64
			Type      string
			CreatedAt time.Time
			Data      db.Order
		}
		if err := json.Unmarshal(h.body, &body); err != nil || body.Type != db.EventOrderCreated || body.ID != d.EventID || body.Data.ID != o.ID {
			t.Fatalf("body %s (%v)", h.body, err)
		}
	})
}

// TestQueueFailsTwiceThenSucceeds: a receiver failing twice gets three
// attempts of one delivery, with one webhook-id, and the log shows them.
func TestQueueFailsTwiceThenSucceeds(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		var rec recorder
		url := rec.serve(t, func(n int) int {
			if n <= 2 {
				return http.StatusServiceUnavailable
			}
			return http.StatusNoContent
		})
		events := []string{"*"}
		w, err := s.CreateWebhook(ctx, db.NewWebhook{URL: &url, Events: &events})
		if err != nil {
			t.Fatal(err)
		}
		deliveries := startQueue(t, s)
		if _, err := deliveries.Test(ctx, w.ID); err != nil {
			t.Fatal(err)
		}
		d := waitDelivery(t, s, w.ID)
		var statuses []int
		for _, a := range d.Attempts {
			statuses = append(statuses, *a.HTTPStatus)
		}
		if d.Status != db.DeliverySucceeded || len(statuses) != 3 || statuses[0] != 503 || statuses[1] != 503 || statuses[2] != 204 {
			t.Fatalf("delivery %s with attempts %v, want succeeded after 503 503 204", d.Status, statuses)
		}
		if *d.Attempts[0].Error != db.AttemptHTTPStatus || d.Attempts[2].Error != nil {
			t.Fatalf("attempt errors = %v, %v", *d.Attempts[0].Error, d.Attempts[2].Error)
		}
		hits := rec.got()
		if len(hits) != 3 {
			t.Fatalf("receiver got %d requests, want 3", len(hits))
		}
		for _, h := range hits {
			if h.header.Get("webhook-id") != strconv.FormatInt(d.ID, 10) {
				t.Fatalf("webhook-id %q, want %d on every attempt", h.header.Get("webhook-id"), d.ID)
			}
		}
	})
}

func ptr[T any](v T) *T { return &v }
