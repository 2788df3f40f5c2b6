package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"petstore/db"
	"petstore/handlers"
	"petstore/handlers/handlerstest"
	"petstore/web"
	"petstore/web/browser/browsertest"
	"petstore/web/ratelimit"
)

// withStrikes makes a ban start after n requests past a first 429.
func withStrikes(n int) handlerstest.Option {
	return func(_ *handlers.Handler, c *ratelimit.Config) { c.Strikes = n }
}

func TestConsoleKeys(t *testing.T) {
	a := handlerstest.New(t, withStrikes(2))
	b := a.SignedIn(t)
	ctx := context.Background()

	var issuedID int64
	t.Run("issue shows the key once", func(t *testing.T) {
		b.Get("/staff/keys").WantStatus(http.StatusOK)
		p := b.Post("/staff/keys", url.Values{"name": {"Partner"}, "role": {"customer"}, "plan": {"pro"}}).WantStatus(http.StatusCreated)
		plain, _ := p.ID("plain-key").Attr("value")
		if !strings.HasPrefix(plain, db.KeyPrefix) {
			t.Fatalf("plain key = %q", plain)
		}
		if p.ID("copy-key").Length() != 1 {
			t.Errorf("no copy button")
		}
		if p.Header.Get("Cache-Control") != web.PrivateCache {
			t.Errorf("Cache-Control = %q", p.Header.Get("Cache-Control"))
		}
		k, err := a.Store.Authenticate(ctx, plain)
		if err != nil || k.Name != "Partner" || k.Plan != db.PlanPro || k.PerMinute != 300 {
			t.Fatalf("issued key = %+v, %v", k, err)
		}
		issuedID = k.ID
		row := p.Find("#key-" + handlerstest.Itoa(k.ID))
		if got := browsertest.Text(row); !contains(got, "Partner", k.Prefix, "customer", "pro", "300/min · 10,000/day", "active") {
			t.Errorf("row = %q", got)
		}
		// Never again: the list does not hold the plain key.
		if p := b.Get("/staff/keys"); strings.Contains(string(p.Body), plain) || p.ID("issued-key").Length() != 0 {
			t.Errorf("the plain key shows again")
		}
	})
	t.Run("issue with invalid values", func(t *testing.T) {
		p := b.Post("/staff/keys", url.Values{"name": {""}, "role": {"customer"}, "plan": {"enterprise"}}).WantStatus(http.StatusUnprocessableEntity)
		if got := browsertest.Text(p.ID("error-name-error")); got != "is required" {
			t.Errorf("name error = %q", got)
		}
		if got := browsertest.Text(p.ID("error-perMinute-error")); got != "is required for enterprise keys" {
			t.Errorf("perMinute error = %q", got)
		}
		if got := browsertest.Text(p.ID("error-perDay-error")); got != "is required for enterprise keys" {
			t.Errorf("perDay error = %q", got)
		}
		p = b.Post("/staff/keys", url.Values{"name": {"Big"}, "role": {"customer"}, "plan": {"enterprise"}, "perMinute": {"0"}, "perDay": {"x"}}).WantStatus(http.StatusUnprocessableEntity)
		if got := browsertest.Text(p.ID("error-perMinute-error")); got != "must be a positive integer" {
			t.Errorf("perMinute error = %q", got)
		}
		if got := browsertest.Text(p.ID("error-perDay-error")); got != "must be a positive integer" {
			t.Errorf("perDay error = %q", got)
		}
		if v, _ := p.ID("key-name").Attr("value"); v != "Big" {
			t.Errorf("the form lost the name: %q", v)
		}
		p = b.Post("/staff/keys", url.Values{"name": {"Big"}, "role": {"boss"}, "plan": {"gold"}}).WantStatus(http.StatusUnprocessableEntity)
		if got := browsertest.Text(p.ID("error-plan-error")); got != "must be one of free, pro, business, enterprise" {
			t.Errorf("plan error = %q", got)
		}
		if got := browsertest.Text(p.ID("error-role-error")); got != "must be customer or staff" {
			t.Errorf("role error = %q", got)
		}
	})
	t.Run("change plan and limits", func(t *testing.T) {
		p := b.Get("/staff/keys/" + handlerstest.Itoa(issuedID)).WantStatus(http.StatusOK)
		if v, _ := p.Find(`#key-plan option[selected]`).Attr("value"); v != "pro" {
			t.Fatalf("plan field = %q", v)
		}
		p = b.Post("/staff/keys/"+handlerstest.Itoa(issuedID), url.Values{"name": {"Partner"}, "plan": {"enterprise"}, "perMinute": {"5"}, "perDay": {"50"}}).WantRedirect("/staff/keys")
		b.Follow(p).WantText("flash", "is on the enterprise plan: 5/min, 50/day.")
		k, _ := a.Store.FindAPIKeyByID(ctx, issuedID)
		if k.Plan != db.PlanEnterprise || k.PerMinute != 5 || k.PerDay != 50 {
			t.Fatalf("key = %+v", k)
		}
		p = b.Post("/staff/keys/"+handlerstest.Itoa(issuedID), url.Values{"name": {"Partner"}, "plan": {"enterprise"}, "perMinute": {"-3"}, "perDay": {"50"}}).WantStatus(http.StatusUnprocessableEntity)
		if got := browsertest.Text(p.ID("error-perMinute-error")); got != "must be a positive integer" {
			t.Errorf("perMinute error = %q", got)
		}
		// Back to a fixed plan: the limits fields are ignored.
		b.Post("/staff/keys/"+handlerstest.Itoa(issuedID), url.Values{"name": {"Partner"}, "plan": {"business"}, "perMinute": {"5"}, "perDay": {"50"}}).WantRedirect("/staff/keys")
		if k, _ := a.Store.FindAPIKeyByID(ctx, issuedID); k.Plan != db.PlanBusiness || k.PerMinute != 1000 {
			t.Fatalf("key = %+v", k)
		}
	})
	t.Run("lift a ban", func(t *testing.T) {
		plain, k := a.IssueKey("tiny", db.RoleCustomer, db.PlanEnterprise, 2, 100)
		a.BanKey(plain, 2, 2)
		p := b.Get("/staff/keys").WantStatus(http.StatusOK)
		row := p.Find("#key-" + handlerstest.Itoa(k.ID))
		if got := browsertest.Text(row.Find(`[data-testid="key-state"]`)); !contains(got, "banned", "15 min left") {
			t.Fatalf("state = %q", got)
		}
		p = b.HXPost("/staff/keys/"+handlerstest.Itoa(k.ID)+"/lift-ban", nil).WantStatus(http.StatusOK)
		if got := browsertest.Text(p.Find("#key-" + handlerstest.Itoa(k.ID) + ` [data-testid="key-state"]`)); got != "active" {
			t.Fatalf("state after lifting = %q", got)
		}
		if p.Header.Get("HX-Trigger") != "keys-changed" {
			t.Errorf("HX-Trigger = %q", p.Header.Get("HX-Trigger"))
		}
		// The key is not banned any more; its minute is still used up.
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/rate-limit", Key: plain}).Want(t, 200)
		r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: plain})
		if r.Status == 403 {
			t.Fatalf("still banned after lifting: %s", r.Body)
		}
	})
	t.Run("revoke", func(t *testing.T) {
		plain, k := a.IssueKey("doomed", db.RoleCustomer, db.PlanFree, 0, 0)
		p := b.HXPost("/staff/keys/"+handlerstest.Itoa(k.ID)+"/revoke", nil).WantStatus(http.StatusOK)
		if got := browsertest.Text(p.Find(`[data-testid="key-state"]`)); got != "revoked" {
			t.Fatalf("state = %q", got)
		}
		if p.ID("revoke-key").Length() != 0 {
			t.Errorf("a revoked key still offers Revoke")
		}
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: plain}).Want(t, 401, "unauthorized")
		if b.Get("/staff/keys").Find("#key-"+handlerstest.Itoa(k.ID)).Length() != 0 {
			t.Errorf("revoked keys are listed by default")
		}
		if b.Get("/staff/keys?revoked=1").Find("#key-"+handlerstest.Itoa(k.ID)).Length() != 1 {
			t.Errorf("revoked keys are not listed on request")
		}
		b.Post("/staff/keys/"+handlerstest.Itoa(k.ID), url.Values{"name": {"zombie"}, "plan": {"free"}}).WantStatus(http.StatusNotFound)
		p = b.Post("/staff/keys/"+handlerstest.Itoa(issuedID)+"/revoke", nil).WantRedirect("/staff/keys")
		b.Follow(p).WantText("flash", "Key “Partner” is revoked.")
	})
}
