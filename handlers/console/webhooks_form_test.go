package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
)

// TestConsoleWebhookFormRefusals (issue 42): the webhook forms refuse, in
// the console's words and in an error summary that takes focus, "All
// events" ticked beside specific events (not the API's "send it alone"),
// no event at all, and a URL another webhook already has (adding or
// editing); what was typed stays; nothing is written.
func TestConsoleWebhookFormRefusals(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		b := a.SignedIn(t)
		ctx := context.Background()
		first := "https://stock.example.com/hook"
		b.Post("/staff/webhooks", url.Values{"url": {first}, "events": {"order.created"}}).WantStatus(http.StatusCreated)
		second := "https://mail.example.com/hook"
		b.Post("/staff/webhooks", url.Values{"url": {second}, "events": {"pet.created"}}).WantStatus(http.StatusCreated)

		refused := func(name, path string, form url.Values, field, want string) {
			t.Helper()
			p := b.Post(path, form).WantStatus(http.StatusUnprocessableEntity)
			sum := p.ID("error-summary")
			if _, auto := sum.Attr("autofocus"); !auto || sum.Find(`a[href="#`+field+`"]`).Length() != 1 {
				t.Errorf("%s: error summary %q does not take focus or link to #%s", name, browsertest.Text(sum), field)
			}
			if got := browsertest.Text(sum); !strings.Contains(got, want) || strings.Contains(got, `"*"`) || strings.Contains(got, "send it alone") {
				t.Errorf("%s: summary %q, want %q in the console's words", name, got, want)
			}
			if v, _ := p.Find("#webhook-url").Attr("value"); v != form.Get("url") {
				t.Errorf("%s: the URL field holds %q, want %q as typed", name, v, form.Get("url"))
			}
		}
		refused("All events beside one", "/staff/webhooks", url.Values{"url": {"https://new.example.com/"}, "events": {"*", "order.created"}},
			"webhook-event-0", "All events already includes every event")
		refused("no event", "/staff/webhooks", url.Values{"url": {"https://new.example.com/"}},
			"webhook-event-0", "Tick at least one event")
		refused("the same URL again", "/staff/webhooks", url.Values{"url": {first}, "events": {"pet.created"}},
			"webhook-url", "A webhook already sends to this URL")
		ws, err := a.Store.FindWebhooks(ctx)
		if err != nil || len(ws) != 2 {
			t.Fatalf("%d webhooks after the refusals (%v), want 2", len(ws), err)
		}
		var mail *db.Webhook
		for _, w := range ws {
			if w.URL == second {
				mail = w
			}
		}
		path := "/staff/webhooks/" + handlerstest.Itoa(mail.ID)
		refused("edited to another's URL", path, url.Values{"url": {first}, "events": {"pet.created"}},
			"webhook-url", "A webhook already sends to this URL")
		// Its own URL is not a duplicate.
		b.Post(path, url.Values{"url": {second}, "events": {"pet.created", "pet.updated"}}).WantStatus(http.StatusSeeOther)
	})
}

// TestConsoleWebhookDeliveriesLive (issue 42): while a delivery is
// pending the deliveries' table body asks for itself again (htmx
// polling) and htmx gets that body alone; once none is pending the body
// it gets stops asking.
func TestConsoleWebhookDeliveriesLive(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		b := a.SignedIn(t)
		ctx := context.Background()
		u := "https://stock.example.com/hook"
		w, err := a.Store.CreateWebhook(ctx, db.NewWebhook{URL: &u, Events: &[]string{"*"}})
		if err != nil {
			t.Fatal(err)
		}
		path := "/staff/webhooks/" + handlerstest.Itoa(w.ID)
		if got, _ := b.Get(path).ID("delivery-rows").Attr("hx-trigger"); got != "" {
			t.Errorf("no delivery, yet the rows poll (%q)", got)
		}
		d, err := a.Handler.Deliveries.Test(ctx, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		rows := b.Get(path).ID("delivery-rows")
		if got, _ := rows.Attr("hx-trigger"); !strings.HasPrefix(got, "every ") {
			t.Errorf("a pending delivery, but the rows do not poll (hx-trigger %q)", got)
		}
		poll, _ := rows.Attr("hx-get")
		if poll != path {
			t.Errorf("the rows poll %q, want %q", poll, path)
		}
		code := 200
		if _, err := a.Store.RecordWebhookAttempt(ctx, db.WebhookAttemptResult{DeliveryID: d.ID, WebhookID: w.ID, Status: db.DeliverySucceeded,
			Attempt: db.WebhookAttempt{At: a.Clock.Now(), DurationMs: 100, HTTPStatus: &code}}); err != nil {
			t.Fatal(err)
		}
		p := b.HX(poll).WantStatus(http.StatusOK)
		if p.IsFullPage() || p.ID("delivery-rows").Length() != 1 {
			t.Fatalf("htmx's poll did not get the rows alone:\n%.400s", p.Body)
		}
		if got := browsertest.Text(p.ID("delivery-status")); !strings.Contains(got, db.DeliverySucceeded) {
			t.Errorf("after the receiver answered the poll says %q", got)
		}
		if got, _ := p.ID("delivery-rows").Attr("hx-trigger"); got != "" {
			t.Errorf("nothing pending, yet the rows still poll (%q)", got)
		}
		if got, _ := b.Get(path + "?status=pending").ID("delivery-rows").Attr("hx-get"); got != "" {
			t.Errorf("the pending filter, nothing pending: polls %q", got)
		}
	})
}
