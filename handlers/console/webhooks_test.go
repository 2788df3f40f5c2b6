package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"petstore/db"
	"petstore/handlers/handlerstest"
	"petstore/web"
	"petstore/web/browser/browsertest"
)

// TestConsoleWebhooks walks the Webhooks page: add (the secret shown
// once), refusals on the form, test, the deliveries with their attempts,
// retry, disable and enable, rotate, edit, the store's reason for
// disabling, delete.
func TestConsoleWebhooks(t *testing.T) {
	a := handlerstest.New(t)
	b := a.SignedIn(t)
	ctx := context.Background()

	p := b.Get("/staff/webhooks").WantStatus(http.StatusOK)
	if p.ID("nav-webhooks").Length() != 1 || p.ID("webhook-row").Length() != 0 {
		t.Fatalf("empty page: nav %d, rows %d", p.ID("nav-webhooks").Length(), p.ID("webhook-row").Length())
	}

	p = b.Post("/staff/webhooks", url.Values{"url": {"ftp://example.com/"}, "description": {"x"}}).WantStatus(http.StatusUnprocessableEntity)
	if got := browsertest.Text(p.ID("error-url-error")); got == "" {
		t.Errorf("no error on the URL")
	}
	if got := browsertest.Text(p.ID("error-events-error")); got == "" {
		t.Errorf("no error on the events")
	}

	p = b.Post("/staff/webhooks", url.Values{"url": {"https://stock.example.com/hook"}, "events": {"order.created", "pet.created"}, "description": {"Stock"}}).
		WantStatus(http.StatusCreated)
	secret, _ := p.ID("secret").Attr("value")
	ws, err := a.Store.FindWebhooks(ctx)
	if err != nil || len(ws) != 1 || ws[0].Secret != secret || strings.Join(ws[0].Events, ",") != "order.created,pet.created" {
		t.Fatalf("added %+v (%v); page secret %q", ws, err, secret)
	}
	if p.Header.Get("Cache-Control") != web.PrivateCache {
		t.Errorf("Cache-Control = %q", p.Header.Get("Cache-Control"))
	}
	w := ws[0]
	path := "/staff/webhooks/" + handlerstest.Itoa(w.ID)
	if p := b.Get("/staff/webhooks"); strings.Contains(string(p.Body), secret) || p.ID("webhook-row").Length() != 1 {
		t.Fatalf("the list shows the secret again, or not the webhook")
	}

	p = b.Follow(b.Post(path+"/test", nil).WantStatus(http.StatusSeeOther)).WantStatus(http.StatusOK)
	if p.ID("delivery-row").Length() != 1 || !strings.Contains(browsertest.Text(p.ID("delivery-row")), db.EventWebhookTest) {
		t.Fatalf("deliveries = %q", browsertest.Text(p.ID("deliveries")))
	}
	ds, _, _ := a.Store.FindWebhookDeliveries(ctx, db.DeliveryFilter{WebhookID: w.ID})
	code := 500
	if _, err := a.Store.RecordWebhookAttempt(ctx, db.WebhookAttemptResult{DeliveryID: ds[0].ID, WebhookID: w.ID, Status: db.DeliveryFailed,
		Attempt: db.WebhookAttempt{At: a.Clock.Now(), DurationMs: 42, HTTPStatus: &code, Error: handlerstest.Ptr(db.AttemptHTTPStatus)},
		Snippet: handlerstest.Ptr("upstream down")}); err != nil {
		t.Fatal(err)
	}
	p = b.Get(path + "?status=failed").WantStatus(http.StatusOK)
	if got := browsertest.Text(p.ID("attempt")); !strings.Contains(got, "42 ms") || !strings.Contains(got, "HTTP 500") || !strings.Contains(got, "http_status") {
		t.Errorf("attempt = %q", got)
	}
	if got := browsertest.Text(p.ID("response-snippet")); got != "upstream down" {
		t.Errorf("snippet = %q", got)
	}
	if p := b.Get(path + "?status=succeeded"); p.ID("delivery-row").Length() != 0 {
		t.Errorf("the succeeded filter shows a failed delivery")
	}
	b.Follow(b.Post(path+"/deliveries/"+handlerstest.Itoa(ds[0].ID)+"/retry", nil).WantStatus(http.StatusSeeOther))
	if d, _ := a.Store.FindWebhookDelivery(ctx, w.ID, ds[0].ID); d.Status != db.DeliveryPending {
		t.Errorf("after retry the delivery is %s", d.Status)
	}

	b.Follow(b.Post(path+"/toggle", nil).WantStatus(http.StatusSeeOther))
	if got, _ := a.Store.FindWebhookByID(ctx, w.ID); got.Enabled {
		t.Fatal("toggle did not disable")
	}
	p = b.Follow(b.Post(path+"/test", nil).WantStatus(http.StatusSeeOther))
	if got := browsertest.Text(p.ID("flash")); !strings.Contains(got, "disabled") {
		t.Errorf("test of a disabled webhook: flash %q", got)
	}
	b.Follow(b.Post(path+"/toggle", nil).WantStatus(http.StatusSeeOther))

	p = b.Post(path+"/rotate", nil).WantStatus(http.StatusOK)
	rotated, _ := p.ID("secret").Attr("value")
	if got, _ := a.Store.FindWebhookByID(ctx, w.ID); rotated == secret || got.Secret != rotated {
		t.Fatalf("rotated secret %q; stored %q; old %q", rotated, got.Secret, secret)
	}

	b.Follow(b.Post(path, url.Values{"url": {"https://stock.example.com/v2"}, "events": {"*"}, "description": {"Stock v2"}}).WantStatus(http.StatusSeeOther))
	if got, _ := a.Store.FindWebhookByID(ctx, w.ID); got.URL != "https://stock.example.com/v2" || strings.Join(got.Events, ",") != "*" {
		t.Fatalf("edited = %+v", got)
	}
	b.Post(path, url.Values{"url": {"https://me:pw@example.com/"}, "events": {"*"}}).WantStatus(http.StatusUnprocessableEntity)

	// The store disables it on a 410: the page and the list say why.
	d, _ := a.Handler.Deliveries.Test(ctx, w.ID)
	gone := 410
	if _, err := a.Store.RecordWebhookAttempt(ctx, db.WebhookAttemptResult{DeliveryID: d.ID, WebhookID: w.ID, Status: db.DeliveryFailed, Gone: true,
		Attempt: db.WebhookAttempt{At: a.Clock.Now(), HTTPStatus: &gone, Error: handlerstest.Ptr(db.AttemptHTTPStatus)}}); err != nil {
		t.Fatal(err)
	}
	if got := browsertest.Text(b.Get(path).ID("disabled-banner")); !strings.Contains(got, db.ReasonGone) {
		t.Errorf("banner = %q", got)
	}
	if got := browsertest.Text(b.Get("/staff/webhooks").ID("disabled-reason")); !strings.Contains(got, db.ReasonGone) {
		t.Errorf("list reason = %q", got)
	}

	b.Follow(b.Post(path+"/delete", nil).WantStatus(http.StatusSeeOther))
	if ws, _ := a.Store.FindWebhooks(ctx); len(ws) != 0 {
		t.Fatalf("%d webhooks after delete", len(ws))
	}
	b.Get(path).WantStatus(http.StatusNotFound)
}
