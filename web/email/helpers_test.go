package email

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/web/email/smtptest"
	"petstore/web/queue"
)

func ptr[T any](v T) *T { return &v }

// shop is a store with two priced pets in stock.
type shop struct {
	s        *db.Store
	rex, tom *db.Pet
}

func newShop(t *testing.T, s *db.Store, rexName string) shop {
	t.Helper()
	ctx := context.Background()
	cat, err := s.CreateCategory(ctx, db.NewCategory{Name: ptr("Dogs")})
	if err != nil {
		t.Fatal(err)
	}
	pet := func(name, price string) *db.Pet {
		p, err := s.CreatePet(ctx, db.NewPet{Name: &name, CategoryID: &cat.ID, Price: &price})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetInventory(ctx, p.ID, db.InventoryUpdate{Quantity: ptr(int64(50))}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return shop{s: s, rex: pet(rexName, "129.50"), tom: pet("Tom", "20")}
}

// checkout places a storefront checkout of 2 Rex and 1 Tom.
func (sh shop) checkout(t *testing.T, shopper string, buyer db.NewCheckout) (*db.Checkout, error) {
	t.Helper()
	return sh.s.PlaceCheckout(context.Background(), shopper, 10000, buyer, []db.NewOrder{
		{PetID: &sh.rex.ID, Quantity: ptr(int64(2))}, {PetID: &sh.tom.ID, Quantity: ptr(int64(1))},
	})
}

// fastSchedule retries after 50 ms, so tests see retries in seconds.
var fastSchedule = []time.Duration{50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond}

// startEmails starts a queue working emails sent to srv (nil: kept).
func startEmails(t *testing.T, s *db.Store, srv *smtptest.Server, schedule []time.Duration) *Emails {
	t.Helper()
	e, _ := startEmailsQueue(t, s, srv, schedule)
	return e
}

// startEmailsQueue is startEmails, also returning the queue it started.
func startEmailsQueue(t *testing.T, s *db.Store, srv *smtptest.Server, schedule []time.Duration) (*Emails, *queue.Queue) {
	t.Helper()
	cfg := Config{Store: s, Now: s.Now, From: "shop@example.com", BaseURL: "https://shop.example", Schedule: schedule, Timeout: 5 * time.Second}
	if srv != nil {
		tr, err := ParseURL(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		cfg.Transport = tr
	}
	q := queue.New(s, queue.Config{Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), PollInterval: 20 * time.Millisecond, RelayPoll: 20 * time.Millisecond})
	e, err := New(q, cfg)
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
	return e, q
}

// waitEmails waits until every email is out of queued, n of them at least.
func waitEmails(t *testing.T, s *db.Store, n int, timeout time.Duration) []*db.Email {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		es, _, err := s.FindEmails(context.Background(), db.EmailFilter{Page: db.Page{Limit: db.MaxLimit}})
		if err != nil {
			t.Fatal(err)
		}
		done := len(es) >= n
		for _, e := range es {
			if e.Status == db.EmailQueued {
				done = false
			}
		}
		if done {
			return es
		}
		if time.Now().After(deadline) {
			var st []string
			for _, e := range es {
				st = append(st, e.Status)
			}
			t.Fatalf("after %v: %d emails %v, want %d out of queued", timeout, len(es), st, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func count(t *testing.T, s *db.Store, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.DB().GetContext(context.Background(), &n, query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func mustContain(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}
