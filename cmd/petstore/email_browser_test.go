package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"petstore/db"
)

// TestEmailsBrowser: a server as `make run` starts it (no SMTP server
// configured) keeps a checkout's confirmation, and the console's Emails
// page lists it and shows it as the buyer would see it: the HTML part in
// its frame, the text part below. The Emails, email and Settings pages
// pass axe at both widths and schemes.
func TestEmailsBrowser(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	cb := &consoleBrowser{t: t, ctx: ctx, ts: ts}
	bella := cb.pet("Bella")
	one := int64(1)
	co, err := ts.Store.PlaceCheckout(context.Background(), "shopper", 10, db.NewCheckout{Name: "Ann Buyer", Email: "ann@example.com"},
		[]db.NewOrder{{PetID: &bella.ID, Quantity: &one}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	var es []*db.Email
	for len(es) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no email kept within 10 s of the checkout")
		}
		time.Sleep(50 * time.Millisecond)
		if es, _, err = ts.Store.FindEmails(context.Background(), db.EmailFilter{}); err != nil {
			t.Fatal(err)
		}
	}
	if es[0].Status != db.EmailKept {
		t.Fatalf("email %s, want kept", es[0].Status)
	}
	cb.signIn()
	cb.navigate(chromedp.Navigate(ts.URL + "/staff/emails"))
	cb.waitJS(`document.querySelectorAll('[data-testid="email-row"]').length === 1`)
	wantAxeClean(t, ctx, "emails")
	screenshot(t, ctx, "console-emails")
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-testid="email-link"]`)))
	cb.waitJS(`!!document.querySelector('[data-testid="email-html"]')`)
	number := strconv.FormatInt(co.ID, 10)
	if got := cb.text(`[data-testid="email-text"]`); !strings.Contains(got, number) || !strings.Contains(got, "Bella") {
		t.Fatalf("the text part shown: %q", got)
	}
	wantAxeClean(t, ctx, "email")
	screenshot(t, ctx, "console-email")
	cb.navigate(chromedp.Navigate(ts.URL + "/staff/settings"))
	cb.waitJS(`!!document.querySelector('[data-testid="settings-form"]')`)
	wantAxeClean(t, ctx, "settings")
}
