package email

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web"
	"petstore/web/email/smtptest"
	"petstore/web/queue"
)

// TestEmailRates measures, when PETSTORE_EMAIL_RATES is set (it takes
// about a minute per database, so the suite skips it): storefront
// checkouts placed per second through the store by 32 goroutines with
// emails off (the queue and its relay running without the emails) and on (the relay and the senders
// working to a local SMTP server), and the rate at which 10,000 queued
// emails drain to that server. It reports the figures; the targets are
// ≥ 0.85 of the off rate and ≥ 300 emails/s.
func TestEmailRates(t *testing.T) {
	if os.Getenv("PETSTORE_EMAIL_RATES") == "" {
		t.Skip("set PETSTORE_EMAIL_RATES=1 to measure (about a minute per database)")
	}
	dbtest.EachInTurn(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		s.Now = time.Now
		ctx := context.Background()
		sh := newShop(t, s, "Rex")
		for _, p := range []*db.Pet{sh.rex, sh.tom} {
			if _, err := s.SetInventory(ctx, p.ID, db.InventoryUpdate{Quantity: ptr(int64(900_000))}); err != nil {
				t.Fatal(err)
			}
		}
		// The checkouts count as requests in flight, as the app's do.
		load := &web.Load{}
		var shopper atomic.Int64
		place := func(d time.Duration) float64 {
			var n atomic.Int64
			stop := time.Now().Add(d)
			var wg sync.WaitGroup
			for range 32 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for time.Now().Before(stop) {
						i := shopper.Add(1)
						leave := load.Enter()
						_, err := s.PlaceCheckout(ctx, fmt.Sprint("s", i), 100, db.NewCheckout{Name: "Buyer", Email: fmt.Sprintf("b%d@example.com", i)},
							[]db.NewOrder{{PetID: &sh.rex.ID, Quantity: ptr(int64(1))}})
						leave()
						if err != nil {
							t.Error(err)
							return
						}
						n.Add(1)
					}
				}()
			}
			wg.Wait()
			return float64(n.Load()) / d.Seconds()
		}
		// Off: the server's queue without the emails (the relay runs, as
		// it does for webhooks, and makes nothing of the orders).
		q0 := queue.New(s, queue.Config{})
		if err := q0.Start(ctx); err != nil {
			t.Fatal(err)
		}
		off := place(10 * time.Second)
		if err := q0.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DB().ExecContext(ctx, `UPDATE event_relay SET after_event_id = 0`); err != nil {
			t.Fatal(err) // the emails' queue relays those checkouts again: the backlog
		}

		srv := smtptest.Start(t, smtptest.Options{})
		q := queue.New(s, queue.Config{})
		if _, err := New(q, Config{Store: s, Transport: mustParse(t, srv.URL()), From: "shop@example.com", Load: load}); err != nil {
			t.Fatal(err)
		}
		// The backlog first: the checkouts so far (off) queue their emails
		// when the queue starts.
		var backlog int
		if err := s.DB().GetContext(ctx, &backlog, `SELECT count(*) FROM checkouts`); err != nil {
			t.Fatal(err)
		}
		extra := max(0, 10_000-backlog)
		for i := range extra {
			if _, err := s.PlaceCheckout(ctx, fmt.Sprint("x", i), 100, db.NewCheckout{Name: "Buyer", Email: fmt.Sprintf("x%d@example.com", i)},
				[]db.NewOrder{{PetID: &sh.tom.ID, Quantity: ptr(int64(1))}}); err != nil {
				t.Fatal(err)
			}
		}
		backlog += extra
		began := time.Now()
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = q.Stop(context.Background()) }()
		srv.Wait(t, backlog, 5*time.Minute)
		drain := float64(backlog) / time.Since(began).Seconds()

		on := place(10 * time.Second)
		t.Logf("%s: checkouts/s emails off %.0f, on %.0f (%.2f of off); %d queued emails drained at %.0f/s",
			s.Dialect(), off, on, on/off, backlog, drain)
	})
}
