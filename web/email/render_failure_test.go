package email

import (
	"context"
	"errors"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web/queue"
)

// TestRenderFailureDoesNotStallRelay: an email that cannot be rendered is
// written failed, with an attempt saying so and nothing of the error's
// text, and the relay moves on: the other checkout's confirmation is made
// in the same run and so are later ones. Resending the failed one is
// refused (there is no message). Before, the render error rolled the
// relay's batch back, and every run after it failed on the same event.
func TestRenderFailureDoesNotStallRelay(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		sh := newShop(t, s, "Rex")
		q := queue.New(s, queue.Config{})
		e, err := New(q, Config{Store: s, Now: s.Now, From: "shop@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		e.renderer.render = func(ctx context.Context, m message) (string, string, error) {
			if strings.Contains(m.Greeting, "Bad") {
				return "", "", errors.New("template: internal detail")
			}
			return render(ctx, m)
		}
		for _, name := range []string{"Bad", "Ann"} {
			if _, err := sh.checkout(t, name, db.NewCheckout{Name: name, Email: strings.ToLower(name) + "@example.com"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := q.Relay(ctx); err != nil {
			t.Fatalf("relay: %v", err)
		}
		if _, err := sh.checkout(t, "cy", db.NewCheckout{Name: "Cy", Email: "cy@example.com"}); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Relay(ctx); err != nil {
			t.Fatalf("relay after: %v", err)
		}
		es, _, err := s.FindEmails(ctx, db.EmailFilter{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]*db.Email{}
		for _, m := range es {
			got[m.ToAddr] = m
		}
		if len(es) != 3 || got["ann@example.com"] == nil || got["cy@example.com"] == nil || got["bad@example.com"] == nil {
			t.Fatalf("%d emails: %v", len(es), got)
		}
		for _, addr := range []string{"ann@example.com", "cy@example.com"} {
			if m := got[addr]; m.Status != db.EmailKept || m.Text == "" {
				t.Fatalf("%s: %s, text %q", addr, m.Status, m.Text)
			}
		}
		bad := got["bad@example.com"]
		if bad.Status != db.EmailFailed || bad.Text != "" || bad.HTML != "" || len(bad.Attempts) != 1 ||
			bad.Attempts[0].Outcome != db.AttemptPermanent || !strings.Contains(bad.Attempts[0].Answer, "could not be made") ||
			strings.Contains(bad.Attempts[0].Answer, "internal detail") {
			t.Fatalf("unrendered email: %s, %d attempts %+v", bad.Status, len(bad.Attempts), bad.Attempts)
		}
		if _, err := e.Resend(ctx, bad.ID); db.ErrorCode(err) != db.EValidationFailed {
			t.Fatalf("resend of an unrendered email: %v", err)
		}
	})
}
