package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"petstore/db"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
)

// TestConsoleEmails walks the Emails and Settings pages: the settings
// refused and saved (audited), a checkout's kept confirmation listed,
// filtered and shown (its HTML part framed under a sandboxing CSP), a
// resend (audited), a clerk refused, and the Account page's opt-in.
func TestConsoleEmails(t *testing.T) {
	a := handlerstest.New(t)
	b := a.SignedIn(t)
	ctx := context.Background()

	p := b.Post("/staff/settings", url.Values{"name": {""}, "pickupAddress": {"x"}, "replyTo": {"not an address"}}).WantStatus(http.StatusUnprocessableEntity)
	if browsertest.Text(p.ID("error-s-name-error")) == "" || browsertest.Text(p.ID("error-s-reply-error")) == "" {
		t.Fatalf("refused settings show no errors: %s", p.Body)
	}
	b.Post("/staff/settings", url.Values{"name": {"Paws <& Co>"}, "pickupAddress": {"1 Kennel Road\nDogtown"}, "replyTo": {"hi@paws.example"}}).WantStatus(http.StatusSeeOther)
	st, err := a.Store.FindShopSettings(ctx)
	if err != nil || st.Name != "Paws <& Co>" || st.ReplyTo != "hi@paws.example" {
		t.Fatalf("settings %+v (%v)", st, err)
	}
	if n := handlerstest.CountRows(t, a, "audit_log WHERE action = 'settings.update'"); n != 1 {
		t.Fatalf("%d settings.update entries", n)
	}

	one := int64(1)
	cat, _ := a.Store.CreateCategory(ctx, db.NewCategory{Name: ptr("Dogs")})
	pet, _ := a.Store.CreatePet(ctx, db.NewPet{Name: ptr("<script>Rex</script>"), CategoryID: &cat.ID, Price: ptr("12")})
	co, err := a.Store.PlaceCheckout(ctx, "ann", 10, db.NewCheckout{Name: "Ann", Email: "ann@example.com"}, []db.NewOrder{{PetID: &pet.ID, Quantity: &one}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Queue.Relay(ctx); err != nil {
		t.Fatal(err)
	}
	p = b.Get("/staff/emails").WantStatus(http.StatusOK)
	if p.ID("email-row").Length() != 1 || p.ID("emails-kept-note").Length() != 1 || p.ID("nav-emails").Length() != 1 {
		t.Fatalf("emails page: %d rows, kept note %d", p.ID("email-row").Length(), p.ID("emails-kept-note").Length())
	}
	if got := browsertest.Text(p.ID("email-status")); got != db.EmailKept {
		t.Fatalf("status %q", got)
	}
	if b.Get("/staff/emails?status=failed").ID("email-row").Length() != 0 || b.Get("/staff/emails?to=ANN").ID("email-row").Length() != 1 {
		t.Fatal("filters do not filter")
	}
	b.Get("/staff/emails?status=bogus").WantStatus(http.StatusUnprocessableEntity)
	b.Get("/staff/emails?kind=%00").WantStatus(http.StatusUnprocessableEntity)
	es, _, _ := a.Store.FindEmails(ctx, db.EmailFilter{})
	path := "/staff/emails/" + handlerstest.Itoa(es[0].ID)
	p = b.Get(path).WantStatus(http.StatusOK)
	if !strings.Contains(browsertest.Text(p.ID("email-text")), handlerstest.Itoa(co.ID)) || p.ID("email-html").Length() != 1 {
		t.Fatalf("email page: text %q", browsertest.Text(p.ID("email-text")))
	}
	if strings.Contains(string(p.Body), "<script>Rex") {
		t.Fatal("the email page carries the pet's name unescaped")
	}
	h := b.Get(path + "/html").WantStatus(http.StatusOK)
	if csp := h.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "sandbox;") || strings.Contains(csp, "script-src") {
		t.Fatalf("the HTML part's CSP %q", csp)
	}
	if !strings.Contains(string(h.Body), "&lt;script&gt;Rex") || strings.Contains(string(h.Body), "<script>Rex") {
		t.Fatalf("the HTML part: %s", h.Body)
	}
	b.Get("/staff/emails/99999").WantStatus(http.StatusNotFound)
	b.Get("/staff/emails/abc").WantStatus(http.StatusBadRequest)

	b.Follow(b.Post(path+"/resend", nil).WantStatus(http.StatusSeeOther)).WantStatus(http.StatusOK)
	if n := handlerstest.CountRows(t, a, "audit_log WHERE action = 'email.resend'"); n != 1 {
		t.Fatalf("%d email.resend entries", n)
	}
	b.Post("/staff/emails/99999/resend", nil).WantStatus(http.StatusNotFound)

	// The Account page's opt-in: an address is needed.
	p = b.Post("/staff/account/email", url.Values{"notifyOrders": {"on"}}).WantStatus(http.StatusUnprocessableEntity)
	if browsertest.Text(p.ID("error-a-email-error")) == "" {
		t.Fatalf("no error on the address: %s", p.Body)
	}
	b.Post("/staff/account/email", url.Values{"email": {"admin@paws.example"}, "notifyOrders": {"on"}}).WantStatus(http.StatusSeeOther)
	p = b.Get("/staff/account").WantStatus(http.StatusOK)
	if v, _ := p.ID("account-email").Attr("value"); v != "admin@paws.example" {
		t.Fatalf("address shown %q", v)
	}
	if _, ok := p.ID("notify-orders").Attr("checked"); !ok {
		t.Fatal("opt-in not checked")
	}
}
