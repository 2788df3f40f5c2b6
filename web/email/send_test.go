package email

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web/email/smtptest"
	"petstore/web/queue"
)

// TestCheckoutSendsOneConfirmation: a checkout of two lines sends one
// confirmation, to the buyer, whose text and HTML parts both carry the
// order number, each line, the total and the lookup link, with a
// Message-ID, the shop's name as sender and its reply-to; a refused
// checkout and a rolled-back one send nothing.
func TestCheckoutSendsOneConfirmation(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		sh := newShop(t, s, "Rex")
		if _, err := s.UpdateShopSettings(ctx, db.ShopSettings{Name: "Paws & Co", PickupAddress: "1 Kennel Road\nDogtown", ReplyTo: "hello@paws.example"}); err != nil {
			t.Fatal(err)
		}
		srv := smtptest.Start(t, smtptest.Options{})
		startEmails(t, s, srv, fastSchedule)

		// Refused: past the cap, and a bad line; neither writes anything.
		if _, err := s.PlaceCheckout(ctx, "bob", 1, db.NewCheckout{Name: "Bob", Email: "bob@example.com"},
			[]db.NewOrder{{PetID: &sh.rex.ID, Quantity: ptr(int64(2))}}); db.ErrorCode(err) != db.ETooManyOpenUnits {
			t.Fatalf("over the cap: %v", err)
		}
		if _, err := s.PlaceCheckout(ctx, "bob", 10000, db.NewCheckout{Name: "Bob", Email: "bob@example.com"},
			[]db.NewOrder{{PetID: &sh.rex.ID, Quantity: ptr(int64(1))}, {PetID: &sh.tom.ID, Quantity: ptr(int64(999))}}); db.ErrorCode(err) != db.EInsufficientStock {
			t.Fatalf("a line past the stock: %v", err)
		}

		co, err := sh.checkout(t, "ann", db.NewCheckout{Name: "Ann Smith", Email: "ann@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		srv.Wait(t, 1, 10*time.Second)
		es := waitEmails(t, s, 1, 10*time.Second)
		time.Sleep(300 * time.Millisecond) // nothing more may come
		msgs := srv.Messages()
		if len(msgs) != 1 || len(es) != 1 {
			t.Fatalf("%d messages, %d emails; want one confirmation", len(msgs), len(es))
		}
		m := msgs[0]
		if len(m.To) != 1 || m.To[0] != "ann@example.com" || m.From != "shop@example.com" {
			t.Fatalf("envelope from %q to %v", m.From, m.To)
		}
		h := m.Header()
		n := strconv.FormatInt(co.ID, 10)
		if h.Get("Message-Id") != es[0].MessageID || !strings.HasPrefix(es[0].MessageID, "<email-") {
			t.Fatalf("Message-ID %q, row's %q", h.Get("Message-Id"), es[0].MessageID)
		}
		from, _ := h.AddressList("From")
		if len(from) != 1 || from[0].Name != "Paws & Co" || from[0].Address != "shop@example.com" || h.Get("Reply-To") != "<hello@paws.example>" {
			t.Fatalf("From %v, Reply-To %q", from, h.Get("Reply-To"))
		}
		text, html, err := m.Parts()
		if err != nil {
			t.Fatal(err)
		}
		for part, body := range map[string]string{"text": text, "html": html} {
			mustContain(t, part, body, n, "Rex", "Tom", "129.50 EUR", "259.00 EUR", "20.00 EUR", "279.00 EUR",
				"https://shop.example/orders/lookup", "Kennel Road", "Dogtown")
		}
		mustContain(t, "html", html, "Paws &amp; Co")
		if es[0].Status != db.EmailSent || len(es[0].Attempts) != 1 || es[0].Attempts[0].Outcome != db.AttemptSent || es[0].Kind != db.EmailOrderPlaced {
			t.Fatalf("email %+v", es[0])
		}

		// Rolled back: an import-like failure after the checkout wrote its
		// rows. The store's own transaction is rolled back by a cancelled
		// context mid-checkout: nothing is committed, no email.
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.PlaceCheckout(cctx, "carl", 10, db.NewCheckout{Name: "Carl", Email: "carl@example.com"},
			[]db.NewOrder{{PetID: &sh.rex.ID, Quantity: ptr(int64(1))}}); err == nil {
			t.Fatal("a checkout with a cancelled context committed")
		}
		time.Sleep(300 * time.Millisecond)
		if got := len(srv.Messages()); got != 1 || count(t, s, `SELECT count(*) FROM emails`) != 1 {
			t.Fatalf("%d messages after refused and rolled-back checkouts, want 1", got)
		}
	})
}

// TestTemporaryFailuresRetry: a server answering 451 twice, then 250,
// gets three attempts and one email; the attempts keep each answer.
func TestTemporaryFailuresRetry(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		sh := newShop(t, s, "Rex")
		srv := smtptest.Start(t, smtptest.Options{Answer: func(n int) *smtp.SMTPError {
			if n <= 2 {
				return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
			}
			return nil
		}})
		startEmails(t, s, srv, fastSchedule)
		if _, err := sh.checkout(t, "ann", db.NewCheckout{Name: "Ann", Email: "ann@example.com"}); err != nil {
			t.Fatal(err)
		}
		es := waitEmails(t, s, 1, 15*time.Second)
		e := es[0]
		if e.Status != db.EmailSent || len(e.Attempts) != 3 || srv.Datas() != 3 || len(srv.Messages()) != 1 {
			t.Fatalf("status %s, %d attempts, %d DATA, %d messages; want sent after 3", e.Status, len(e.Attempts), srv.Datas(), len(srv.Messages()))
		}
		for i, a := range e.Attempts[:2] {
			if a.Outcome != db.AttemptTemporary || a.SMTPCode == nil || *a.SMTPCode != 451 || !strings.Contains(a.Answer, "try again later") {
				t.Fatalf("attempt %d = %+v", i+1, a)
			}
		}
		if e.Attempts[2].Outcome != db.AttemptSent {
			t.Fatalf("third attempt %+v", e.Attempts[2])
		}
	})
}

// TestJobsPageCancel: an email whose server answers 451 is a failed job on
// the console's Jobs page (queue.Failures: the answer, one attempt) while
// it waits an hour to try again; cancelling the job fails the email, and
// nothing sends it.
func TestJobsPageCancel(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		sh := newShop(t, s, "Rex")
		srv := smtptest.Start(t, smtptest.Options{Answer: func(int) *smtp.SMTPError {
			return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
		}})
		_, q := startEmailsQueue(t, s, srv, []time.Duration{time.Hour})
		if _, err := sh.checkout(t, "ann", db.NewCheckout{Name: "Ann", Email: "ann@example.com"}); err != nil {
			t.Fatal(err)
		}
		var fs []queue.FailedJob
		for i := 0; len(fs) == 0; i++ {
			if i == 1500 {
				t.Fatal("no failed job within 30 s")
			}
			time.Sleep(20 * time.Millisecond)
			var err error
			if fs, err = q.Failures(ctx, 10); err != nil {
				t.Fatal(err)
			}
		}
		if f := fs[0]; f.Queue != JobQueue || f.Error != "temporary 451" || f.Attempts != 1 || !f.CanCancel {
			t.Fatalf("failed job %+v, want the email's, temporary 451, one attempt", f)
		}
		if _, after, err := q.Cancel(ctx, fs[0].ID); err != nil || after != "cancelled" {
			t.Fatalf("cancel: %s, %v", after, err)
		}
		es, _, err := s.FindEmails(ctx, db.EmailFilter{})
		if err != nil || len(es) != 1 || es[0].Status != db.EmailFailed || srv.Datas() != 1 {
			t.Fatalf("emails %+v (%v), %d DATA; want one, failed after one attempt", es, err, srv.Datas())
		}
	})
}

// TestPermanentFailureStops: a 550 fails the email after one attempt,
// and nothing retries it.
func TestPermanentFailureStops(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		s := open(t)
		sh := newShop(t, s, "Rex")
		srv := smtptest.Start(t, smtptest.Options{Answer: func(int) *smtp.SMTPError {
			return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
		}})
		startEmails(t, s, srv, fastSchedule)
		if _, err := sh.checkout(t, "ann", db.NewCheckout{Name: "Ann", Email: "ann@example.com"}); err != nil {
			t.Fatal(err)
		}
		e := waitEmails(t, s, 1, 10*time.Second)[0]
		time.Sleep(500 * time.Millisecond) // ten times the retry wait
		e, err := s.FindEmailByID(context.Background(), e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if e.Status != db.EmailFailed || len(e.Attempts) != 1 || srv.Datas() != 1 || *e.Attempts[0].SMTPCode != 550 || !strings.Contains(e.Attempts[0].Answer, "no such mailbox") {
			t.Fatalf("status %s, attempts %+v, %d DATA; want failed after one 550", e.Status, e.Attempts, srv.Datas())
		}
	})
}

// TestScheduleCoversADay: the default retries span at least 24 hours.
func TestScheduleCoversADay(t *testing.T) {
	var total time.Duration
	for _, d := range DefaultSchedule {
		total += d
	}
	if total < 24*time.Hour {
		t.Fatalf("retries span %v, want at least 24h", total)
	}
}
