package api_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/webhooks"
)

// TestWebhooksAPI covers /webhooks on both databases, every exchange
// checked against the OpenAPI document: the secret in the answers of
// create and rotate only, changes, the cap, and 404s.
func TestWebhooksAPI(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		body := map[string]any{"url": "https://stock.example.com/hook", "events": []string{"order.created", "inventory.updated"}, "description": " Stock sync "}
		r := a.Do(handlerstest.Req{Method: "POST", Path: "/api/webhooks", Key: a.Staff, Body: body}).Want(t, 201)
		var created struct {
			db.Webhook
			Secret string `json:"secret"`
		}
		r.Decode(t, &created)
		path := "/api/webhooks/" + handlerstest.Itoa(created.ID)
		if r.Header.Get("Location") != path || r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("Location %q, Cache-Control %q", r.Header.Get("Location"), r.Header.Get("Cache-Control"))
		}
		if !strings.HasPrefix(created.Secret, "whsec_") || !created.Enabled || created.Description != "Stock sync" ||
			strings.Join(created.Events, ",") != "inventory.updated,order.created" {
			t.Fatalf("created = %s", r.Body)
		}

		for _, p := range []string{"/api/webhooks", path} {
			r := a.Do(handlerstest.Req{Method: "GET", Path: p, Key: a.Staff}).Want(t, 200)
			if bytes.Contains(r.Body, []byte(created.Secret)) || bytes.Contains(r.Body, []byte("secret")) {
				t.Fatalf("GET %s shows the secret: %s", p, r.Body)
			}
		}
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/webhooks", Key: a.Customer}).Want(t, 403, "forbidden")

		r = a.Do(handlerstest.Req{Method: "PATCH", Path: path, Key: a.Staff, Body: map[string]any{"enabled": false, "events": []string{"*"}}}).Want(t, 200)
		var changed db.Webhook
		r.Decode(t, &changed)
		if changed.Enabled || strings.Join(changed.Events, ",") != "*" || changed.URL != created.URL {
			t.Fatalf("changed = %s", r.Body)
		}
		a.Do(handlerstest.Req{Method: "POST", Path: path + "/test", Key: a.Staff}).Want(t, 409, "webhook_disabled")
		a.Do(handlerstest.Req{Method: "PATCH", Path: path, Key: a.Staff, Body: map[string]any{"enabled": true}}).Want(t, 200)

		r = a.Do(handlerstest.Req{Method: "POST", Path: path + "/rotate-secret", Key: a.Staff}).Want(t, 200)
		var rotated struct {
			Secret string `json:"secret"`
		}
		r.Decode(t, &rotated)
		if rotated.Secret == created.Secret || !strings.HasPrefix(rotated.Secret, "whsec_") || r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("rotated = %s", r.Body)
		}

		for _, c := range []struct {
			name string
			body any
		}{
			{"ErrURLScheme", map[string]any{"url": "ftp://example.com/", "events": []string{"*"}}},
			{"ErrURLUserInfo", map[string]any{"url": "https://me:pw@example.com/", "events": []string{"*"}}},
			{"ErrURLLong", map[string]any{"url": "https://example.com/" + strings.Repeat("x", 2000), "events": []string{"*"}}},
			{"ErrEventsEmpty", map[string]any{"url": "https://example.com/", "events": []string{}}},
			{"ErrEventsUnknown", map[string]any{"url": "https://example.com/", "events": []string{"pet.sold"}}},
			{"ErrEventsMissing", map[string]any{"url": "https://example.com/"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				a.Do(handlerstest.Req{Method: "POST", Path: "/api/webhooks", Key: a.Staff, Body: c.body}).Want(t, 422, "validation_failed")
			})
		}
		a.Do(handlerstest.Req{Method: "POST", Path: "/api/webhooks", Key: a.Staff, Body: `{"url":"https://example.com/","events":["*"],"enabled":true}`}).Want(t, 400, "bad_request")

		for range db.MaxWebhooks - 1 {
			a.Do(handlerstest.Req{Method: "POST", Path: "/api/webhooks", Key: a.Staff, Body: map[string]any{"url": "https://example.com/", "events": []string{"*"}}}).Want(t, 201)
		}
		a.Do(handlerstest.Req{Method: "POST", Path: "/api/webhooks", Key: a.Staff, Body: map[string]any{"url": "https://example.com/", "events": []string{"*"}}}).Want(t, 409, "too_many_webhooks")

		a.Do(handlerstest.Req{Method: "DELETE", Path: path, Key: a.Staff}).Want(t, 204)
		for _, p := range []string{path, path + "/deliveries"} {
			a.Do(handlerstest.Req{Method: "GET", Path: p, Key: a.Staff}).Want(t, 404, "not_found")
		}
		a.Do(handlerstest.Req{Method: "POST", Path: path + "/test", Key: a.Staff}).Want(t, 404, "not_found")
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/webhooks/x", Key: a.Staff}).Want(t, 400, "bad_request")
	})
}

// TestWebhookDeliveriesAPI: an order placed through the API, once
// relayed, queues one delivery per subscribed endpoint, a refused order
// (409) none; the deliveries list newest first and filters; test and retry
// answer 202, each with its job.
func TestWebhookDeliveriesAPI(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		pet := a.SeedPet("Rex", 1)
		mk := func(events ...string) string {
			r := a.Do(handlerstest.Req{Method: "POST", Path: "/api/webhooks", Key: a.Staff, Body: map[string]any{"url": "https://example.com/", "events": events}}).Want(t, 201)
			var w db.Webhook
			r.Decode(t, &w)
			return "/api/webhooks/" + handlerstest.Itoa(w.ID)
		}
		orders, pets := mk("order.created"), mk("pet.created")
		deliveries := func(path, query string) []db.WebhookDelivery {
			var ds []db.WebhookDelivery
			a.GetJSON(t, a.Staff, path+"/deliveries"+query, &ds)
			return ds
		}

		order := map[string]any{"petId": pet.ID, "quantity": 1}
		a.Do(handlerstest.Req{Method: "POST", Path: "/api/store/orders", Key: a.Customer, Body: order}).Want(t, 201)
		a.Do(handlerstest.Req{Method: "POST", Path: "/api/store/orders", Key: a.Customer, Body: order}).Want(t, 409, "pet_not_available")
		if _, err := a.Queue.Relay(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := deliveries(orders, ""); len(got) != 1 || got[0].EventType != "order.created" || got[0].Status != "pending" {
			t.Fatalf("deliveries of order.created = %+v, want one pending", got)
		}
		if got := deliveries(pets, ""); len(got) != 0 {
			t.Fatalf("deliveries of pet.created = %+v, want none", got)
		}

		r := a.Do(handlerstest.Req{Method: "POST", Path: orders + "/test", Key: a.Staff}).Want(t, 202)
		var test db.WebhookDelivery
		r.Decode(t, &test)
		if test.EventType != db.EventWebhookTest || test.Status != "pending" || test.NextAttemptAt == nil {
			t.Fatalf("test delivery = %s", r.Body)
		}
		got := deliveries(orders, "?limit=1")
		if len(got) != 1 || got[0].ID != test.ID {
			t.Fatalf("newest first: %+v, want the test delivery %d", got, test.ID)
		}
		r = a.Do(handlerstest.Req{Method: "GET", Path: orders + "/deliveries?limit=1", Key: a.Staff}).Want(t, 200)
		if next := handlerstest.NextLink(r); next == "" {
			t.Fatal("no next link with two deliveries and limit=1")
		} else if ds := deliveries(orders, strings.TrimPrefix(next, orders+"/deliveries")); len(ds) != 1 || ds[0].EventType != "order.created" {
			t.Fatalf("second page = %+v", ds)
		}
		if got := deliveries(orders, "?status=succeeded"); len(got) != 0 {
			t.Fatalf("succeeded = %+v", got)
		}
		a.Do(handlerstest.Req{Method: "GET", Path: orders + "/deliveries?status=lost", Key: a.Staff}).Want(t, 400, "bad_request")

		r = a.Do(handlerstest.Req{Method: "POST", Path: orders + "/deliveries/" + handlerstest.Itoa(test.ID) + "/retry", Key: a.Staff}).Want(t, 202)
		var retried db.WebhookDelivery
		r.Decode(t, &retried)
		if retried.ID != test.ID || retried.Status != "pending" {
			t.Fatalf("retried = %s", r.Body)
		}
		a.Do(handlerstest.Req{Method: "POST", Path: pets + "/deliveries/" + handlerstest.Itoa(test.ID) + "/retry", Key: a.Staff}).Want(t, 404, "not_found")
		// A job per delivery, and one more for the retry's generation.
		var jobs int
		if err := a.Store.DB().Get(&jobs, `SELECT count(*) FROM river_job WHERE kind = $1 AND queue = $2`, webhooks.JobKind, webhooks.JobQueue); err != nil || jobs != 3 {
			t.Fatalf("%d delivery jobs (%v), want 3", jobs, err)
		}
	})
}

// TestWebhookSecretNeverStoredForReplay: create and rotate-secret with an
// Idempotency-Key keep no record holding the secret, and a retry with the
// same key runs again, showing a new secret (as POST /keys does with the
// plain key), never the first one: not after a rotation, not after the
// endpoint is deleted. Their refusals, which hold no secret, are replayed.
func TestWebhookSecretNeverStoredForReplay(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		secretOf := func(r *handlerstest.Response) string {
			t.Helper()
			var w struct {
				ID     int64  `json:"id"`
				Secret string `json:"secret"`
			}
			r.Decode(t, &w)
			if !strings.HasPrefix(w.Secret, "whsec_") {
				t.Fatalf("no secret in %s", r.Body)
			}
			return w.Secret
		}
		noSecretStored := func(secrets ...string) {
			t.Helper()
			var bodies [][]byte
			if err := a.Store.DB().Select(&bodies, `SELECT body FROM idempotency_keys WHERE body IS NOT NULL`); err != nil {
				t.Fatal(err)
			}
			for _, b := range bodies {
				for _, s := range secrets {
					if bytes.Contains(b, []byte(s)) || bytes.Contains(b, []byte("whsec_")) {
						t.Errorf("a webhook secret is stored in idempotency_keys: %s", b)
					}
				}
			}
		}
		body := `{"url":"https://stock.example.com/hook","events":["*"]}`
		r := a.Post("/api/webhooks", a.Staff, "hook-1", body).Want(t, 201)
		first := secretOf(r)
		path := r.Header.Get("Location")
		noSecretStored(first)
		again := a.Post("/api/webhooks", a.Staff, "hook-1", body).Want(t, 201)
		wantFresh(t, again)
		if s := secretOf(again); s == first || bytes.Contains(again.Body, []byte(first)) {
			t.Errorf("the secret %q was shown twice: %s", first, again.Body)
		}

		rotated := secretOf(a.Post(path+"/rotate-secret", a.Staff, "rotate-1", "").Want(t, 200))
		noSecretStored(first, rotated)
		r = a.Post(path+"/rotate-secret", a.Staff, "rotate-1", "").Want(t, 200)
		wantFresh(t, r)
		if s := secretOf(r); s == rotated || s == first {
			t.Errorf("rotate-secret retried showed an earlier secret: %s", r.Body)
		}
		a.Do(handlerstest.Req{Method: "DELETE", Path: path, Key: a.Staff}).Want(t, 204)
		r = a.Post(path+"/rotate-secret", a.Staff, "rotate-1", "").Want(t, 404, "not_found")
		if bytes.Contains(r.Body, []byte("whsec_")) {
			t.Errorf("a deleted endpoint's rotate-secret shows a secret: %s", r.Body)
		}
		noSecretStored(first, rotated)

		// Refusals hold no secret: kept and replayed as any other.
		bad := `{"url":"ftp://example.com/","events":["*"]}`
		refused := a.Post("/api/webhooks", a.Staff, "hook-2", bad).Want(t, 422, "validation_failed")
		wantReplay(t, refused, a.Post("/api/webhooks", a.Staff, "hook-2", bad))
	})
}
