package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web/email/smtptest"
)

// emailShop makes a category and a pet of stock in store, for checkouts.
func emailShop(t *testing.T, store *db.Store, stock int64) *db.Pet {
	t.Helper()
	ctx := context.Background()
	name, price := "Mail Dogs", "10"
	cat, err := store.CreateCategory(ctx, db.NewCategory{Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	pet, petName := (*db.Pet)(nil), "Postie"
	if pet, err = store.CreatePet(ctx, db.NewPet{Name: &petName, CategoryID: &cat.ID, Price: &price}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetInventory(ctx, pet.ID, db.InventoryUpdate{Quantity: &stock}); err != nil {
		t.Fatal(err)
	}
	return pet
}

func emailCheckout(store *db.Store, pet *db.Pet, i int) error {
	one := int64(1)
	_, err := store.PlaceCheckout(context.Background(), fmt.Sprintf("shopper-%d", i), 10,
		db.NewCheckout{Name: fmt.Sprintf("Buyer %d", i), Email: fmt.Sprintf("buyer%d@example.com", i)},
		[]db.NewOrder{{PetID: &pet.ID, Quantity: &one}})
	return err
}

// TestMultiInstanceEmailsEachOnce: two instances on one PostgreSQL, 200
// checkouts placed through both: 200 confirmations reach the SMTP server,
// none twice, and both instances' relays and workers took part.
func TestMultiInstanceEmailsEachOnce(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{})
	a, b := startPair(t, map[string]string{"PETSTORE_SMTP_URL": srv.URL(), "PETSTORE_MAIL_FROM": "shop@example.com"})
	pet := emailShop(t, a.srv.Store, 1000)

	const checkouts = 200
	var wg sync.WaitGroup
	errs := make(chan error, checkouts)
	for i := range checkouts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := emailCheckout([]*node{a, b}[i%2].srv.Store, pet, i); err != nil {
				errs <- err
			}
		}()
		if i%8 == 7 {
			wg.Wait()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	srv.Wait(t, checkouts, 60*time.Second)
	time.Sleep(time.Second) // time for a second copy of any email to show up
	seen := map[string]int{}
	for _, m := range srv.Messages() {
		seen[m.Header().Get("Message-Id")]++
	}
	var twice []string
	for id, n := range seen {
		if n > 1 {
			twice = append(twice, id)
		}
	}
	if len(srv.Messages()) != checkouts || len(seen) != checkouts || len(twice) > 0 {
		t.Fatalf("%d messages, %d Message-IDs, these more than once: %v; want %d once each", len(srv.Messages()), len(seen), twice, checkouts)
	}
	var sent, attempts int
	ctx := context.Background()
	err := a.srv.Store.DB().GetContext(ctx, &sent, `SELECT count(*) FROM emails WHERE status = 'sent'`)
	if err == nil {
		err = a.srv.Store.DB().GetContext(ctx, &attempts, `SELECT count(*) FROM email_attempts`)
	}
	if err != nil || sent != checkouts || attempts != checkouts {
		t.Fatalf("%d emails sent with %d attempts (%v), want %d and %d", sent, attempts, err, checkouts, checkouts)
	}
	c := newClient(t)
	per := map[string]float64{}
	for _, n := range []*node{a, b} {
		per[n.name] = metric(t, c, n, `petstore_emails_total{kind="order_placed",outcome="sent"}`)
	}
	t.Logf("emails sent per instance: %v", per)
	if per["A"]+per["B"] != checkouts {
		t.Fatalf("instances counted %v sends, want %d in all", per, checkouts)
	}
}

// TestEmailSurvivesKill: SIGKILL of the real binary while the SMTP server
// holds its answer to the message; after a restart the email is sent
// again, with the same Message-ID, within 30 s.
func TestEmailSurvivesKill(t *testing.T) {
	t.Parallel() // mostly waiting (on a restart, a rescue, a job): beside the browser tests
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dbtest.EachURL(t, func(t *testing.T, dbURL string) {
		// Most of each run is the queue noticing the killed attempt
		// (email.JobTimeout + queue.RescueGrace, about 20 s): the two
		// databases wait side by side.
		t.Parallel()
		if strings.HasPrefix(dbURL, "sqlite:") {
			dbURL = "sqlite:" + filepath.Join(t.TempDir(), "store.db")
		}
		ctx := context.Background()
		store, err := db.Open(ctx, dbURL, systemClock)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		store.Secrets = dbtest.Keyring()
		if err := store.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		pet := emailShop(t, store, 10)
		held := make(chan struct{}, 1)
		release := make(chan struct{})
		defer close(release)
		srv := smtptest.Start(t, smtptest.Options{
			Hold: func(n int) <-chan struct{} {
				if n != 1 {
					return nil
				}
				held <- struct{}{}
				return release
			},
			// The held attempt's client is dead by the time it is let go.
			Answer: func(n int) *smtp.SMTPError {
				if n == 1 {
					return &smtp.SMTPError{Code: 421, Message: "too late"}
				}
				return nil
			},
		})
		addr := freeAddr(t)
		start := func() *serveProcess {
			return startServeProcess(t, bin, dbURL, addr, "PETSTORE_SMTP_URL="+srv.URL(), "PETSTORE_MAIL_FROM=shop@example.com")
		}
		p := start()
		if err := emailCheckout(store, pet, 1); err != nil {
			t.Fatal(err)
		}
		select {
		case <-held:
		case <-time.After(30 * time.Second):
			t.Fatalf("the first attempt never came\n%s", p.logs())
		}
		p.kill()
		restarted := time.Now()
		p = start()
		defer p.stop(t)
		m := srv.Wait(t, 1, 30*time.Second)[0]
		t.Logf("sent again %v after the restart", time.Since(restarted).Round(100*time.Millisecond))
		es, _, err := store.FindEmails(ctx, db.EmailFilter{})
		if err != nil || len(es) != 1 {
			t.Fatalf("%d emails (%v), want 1", len(es), err)
		}
		if got := m.Header().Get("Message-Id"); got != es[0].MessageID {
			t.Fatalf("Message-ID %q, the email's %q", got, es[0].MessageID)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			e, err := store.FindEmailByID(ctx, es[0].ID)
			if err == nil && e.Status == db.EmailSent {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("email = %+v, %v; want sent", e, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}
