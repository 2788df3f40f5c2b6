package email

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web/email/smtptest"
	"petstore/web/queue"
)

// TestOneJobSendsABatch: the emails of one relay batch go in one job per
// JobBatch of them (River marks each job done with a statement of its
// own); every email is sent once, and one the server refused for a while
// (451) is tried again on its schedule while the others of its job were
// sent at once.
func TestOneJobSendsABatch(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		sh := newShop(t, s, "Rex")
		srv := smtptest.Start(t, smtptest.Options{Answer: func(n int) *smtp.SMTPError {
			if n == 3 {
				return &smtp.SMTPError{Code: 451, Message: "try later"}
			}
			return nil
		}})
		tr, err := ParseURL(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		q := queue.New(s, queue.Config{Logger: slog.New(slog.DiscardHandler), PollInterval: 20 * time.Millisecond, RelayPoll: 20 * time.Millisecond})
		if _, err := New(q, Config{Store: s, Now: s.Now, Transport: tr, From: "shop@example.com", Schedule: fastSchedule, Timeout: 5 * time.Second}); err != nil {
			t.Fatal(err)
		}
		const checkouts = JobBatch + 5
		for i := range checkouts {
			if _, err := s.PlaceCheckout(ctx, fmt.Sprint("s", i), 100, db.NewCheckout{Name: "Buyer", Email: fmt.Sprintf("b%d@example.com", i)},
				[]db.NewOrder{{PetID: &sh.tom.ID, Quantity: ptr(int64(1))}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := q.Relay(ctx); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, `SELECT count(*) FROM river_job WHERE kind = $1`, JobKind); n != 2 {
			t.Fatalf("%d send jobs for %d emails, want 2", n, checkouts)
		}
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			if err := q.Stop(ctx); err != nil {
				t.Errorf("stop queue: %v", err)
			}
		})
		msgs := srv.Wait(t, checkouts, 15*time.Second)
		es := waitEmails(t, s, checkouts, 10*time.Second)
		time.Sleep(200 * time.Millisecond) // nothing more may come
		if got := len(srv.Messages()); got != checkouts {
			t.Fatalf("%d messages, want %d", got, checkouts)
		}
		ids := map[string]bool{}
		for _, m := range msgs {
			ids[m.Header().Get("Message-Id")] = true
		}
		retried := 0
		for _, e := range es {
			if e.Status != db.EmailSent || !ids[e.MessageID] {
				t.Fatalf("email %d: %s, received %v", e.ID, e.Status, ids[e.MessageID])
			}
			switch len(e.Attempts) {
			case 1:
			case 2:
				retried++
				if a := e.Attempts[0]; a.Outcome != db.AttemptTemporary || a.SMTPCode == nil || *a.SMTPCode != 451 {
					t.Fatalf("first attempt of the retried email: %+v", a)
				}
			default:
				t.Fatalf("email %d: %d attempts", e.ID, len(e.Attempts))
			}
		}
		if retried != 1 {
			t.Fatalf("%d emails tried twice, want 1", retried)
		}
	})
}
