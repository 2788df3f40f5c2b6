package email

import (
	"context"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web/email/smtptest"
)

// TestKeptWithoutSMTP: with no SMTP server every email is kept in the
// database, rendered as it would be sent: the confirmation, a word to
// each staff user who opted in (and none to one who did not), a
// cancelled line and an order ready; each once. Resending keeps it again
// with a new Message-ID, audited.
func TestKeptWithoutSMTP(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		sh := newShop(t, s, "Rex")
		ada, err := s.CreateStaffUser(ctx, "ada", "x")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateStaffUser(ctx, "bob", "x"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetStaffEmailPrefs(ctx, ada.ID, db.StaffEmailPrefs{NotifyOrders: true}); db.ErrorCode(err) != db.EValidationFailed {
			t.Fatalf("opting in without an address: %v", err)
		}
		if _, err := s.SetStaffEmailPrefs(ctx, ada.ID, db.StaffEmailPrefs{Email: "ada@shop.example", NotifyOrders: true}); err != nil {
			t.Fatal(err)
		}
		e := startEmails(t, s, nil, fastSchedule)
		co, err := sh.checkout(t, "ann", db.NewCheckout{Name: "Ann", Email: "ann@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CancelOrder(ctx, co.Orders[1].ID, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateOrder(ctx, co.Orders[0].ID, db.OrderUpdate{Complete: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		waitEmails(t, s, 4, 10*time.Second)
		time.Sleep(200 * time.Millisecond)
		es, _, _ := s.FindEmails(ctx, db.EmailFilter{})
		if len(es) != 4 {
			t.Fatalf("%d emails, want 4", len(es))
		}
		got := map[string]*db.Email{}
		for _, m := range es {
			if m.Status != db.EmailKept || m.SentAt == nil || m.Text == "" || m.HTML == "" {
				t.Fatalf("email %d: %s, sent %v", m.ID, m.Status, m.SentAt)
			}
			got[m.Kind+" "+m.ToAddr] = m
		}
		for _, k := range []string{"order_placed ann@example.com", "staff_new_order ada@shop.example", "line_cancelled ann@example.com", "order_ready ann@example.com"} {
			if got[k] == nil {
				t.Fatalf("no %s among %v", k, got)
			}
		}
		mustContain(t, "cancelled", got["line_cancelled ann@example.com"].Text, "Tom", "cancelled")
		mustContain(t, "ready", got["order_ready ann@example.com"].Text, "Rex", "ready")
		mustContain(t, "staff", got["staff_new_order ada@shop.example"].Text, "ann@example.com", "https://shop.example/staff/orders?q=")
		if n := count(t, s, `SELECT count(*) FROM river_job WHERE kind = $1`, JobKind); n != 0 {
			t.Fatalf("%d send jobs while keeping", n)
		}

		staffCtx := db.WithOrigin(ctx, db.Origin{Actor: db.StaffActor(ada.ID, "ada"), RequestID: "r1", IP: "192.0.2.1"})
		placed := got["order_placed ann@example.com"]
		again, err := e.Resend(staffCtx, placed.ID)
		if err != nil {
			t.Fatal(err)
		}
		if again.Status != db.EmailKept || again.MessageID == placed.MessageID || len(again.Attempts) != 1 {
			t.Fatalf("resent: %s %s, %d attempts", again.Status, again.MessageID, len(again.Attempts))
		}
		if n := count(t, s, `SELECT count(*) FROM audit_log WHERE action = 'email.resend' AND target_id = $1`, placed.ID); n != 1 {
			t.Fatalf("%d audit entries of the resend", n)
		}
		if _, err := e.Resend(staffCtx, 99999); db.ErrorCode(err) != db.ENotFound {
			t.Fatalf("resend of no email: %v", err)
		}
	})
}

// TestResendSendsAgain: a failed email resent goes out with a new
// Message-ID.
func TestResendSendsAgain(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		sh := newShop(t, s, "Rex")
		srv := smtptest.Start(t, smtptest.Options{})
		e := startEmails(t, s, srv, fastSchedule)
		if _, err := sh.checkout(t, "ann", db.NewCheckout{Name: "Ann", Email: "ann@example.com"}); err != nil {
			t.Fatal(err)
		}
		first := srv.Wait(t, 1, 10*time.Second)[0]
		m := waitEmails(t, s, 1, 10*time.Second)[0]
		if _, err := e.Resend(ctx, m.ID); err != nil {
			t.Fatal(err)
		}
		second := srv.Wait(t, 2, 10*time.Second)[1]
		if a, b := first.Header().Get("Message-Id"), second.Header().Get("Message-Id"); a == b || !strings.HasPrefix(b, "<email-") {
			t.Fatalf("Message-IDs %q then %q", a, b)
		}
		m = waitEmails(t, s, 1, 10*time.Second)[0]
		if m.Status != db.EmailSent || len(m.Attempts) != 2 {
			t.Fatalf("after resend: %s, %d attempts", m.Status, len(m.Attempts))
		}
	})
}
