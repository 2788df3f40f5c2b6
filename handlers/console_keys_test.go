package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"petstore/db"
	"petstore/handlers"
	"petstore/web/ratelimit"
)

// withStrikes makes a ban start after n requests past a first 429.
func withStrikes(n int) appOption {
	return func(_ *handlers.Handler, c *ratelimit.Config) { c.Strikes = n }
}

// banKey drives a key on a tiny limit into a ban through the API.
func (a *testApp) banKey(plain string, perMinute int64, strikes int) {
	a.t.Helper()
	for i := int64(0); i < perMinute; i++ {
		a.do(req{method: "GET", path: "/api/pets", key: plain}).want(a.t, 200)
	}
	a.do(req{method: "GET", path: "/api/pets", key: plain}).want(a.t, 429, "rate_limited")
	for i := 1; i < strikes; i++ {
		a.do(req{method: "GET", path: "/api/pets", key: plain}).want(a.t, 429, "rate_limited")
	}
	a.do(req{method: "GET", path: "/api/pets", key: plain}).want(a.t, 403, "api_key_banned")
}

func TestConsoleKeys(t *testing.T) {
	a := newTestApp(t, withStrikes(2))
	b := a.signedIn(t)
	ctx := context.Background()

	var issuedID int64
	t.Run("issue shows the key once", func(t *testing.T) {
		b.get("/staff/keys").wantStatus(http.StatusOK)
		p := b.post("/staff/keys", url.Values{"name": {"Partner"}, "role": {"customer"}, "plan": {"pro"}}).wantStatus(http.StatusCreated)
		plain, _ := p.id("plain-key").Attr("value")
		if !strings.HasPrefix(plain, db.KeyPrefix) {
			t.Fatalf("plain key = %q", plain)
		}
		if p.id("copy-key").Length() != 1 {
			t.Errorf("no copy button")
		}
		if p.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("Cache-Control = %q", p.Header.Get("Cache-Control"))
		}
		k, err := a.store.Authenticate(ctx, plain)
		if err != nil || k.Name != "Partner" || k.Plan != db.PlanPro || k.PerMinute != 300 {
			t.Fatalf("issued key = %+v, %v", k, err)
		}
		issuedID = k.ID
		row := p.find("#key-" + itoa(k.ID))
		if got := text(row); !contains(got, "Partner", k.Prefix, "customer", "pro", "300/min · 10,000/day", "active") {
			t.Errorf("row = %q", got)
		}
		// Never again: the list does not hold the plain key.
		if p := b.get("/staff/keys"); strings.Contains(string(p.Body), plain) || p.id("issued-key").Length() != 0 {
			t.Errorf("the plain key shows again")
		}
	})
	t.Run("issue with invalid values", func(t *testing.T) {
		p := b.post("/staff/keys", url.Values{"name": {""}, "role": {"customer"}, "plan": {"enterprise"}}).wantStatus(http.StatusUnprocessableEntity)
		if got := text(p.id("error-name-error")); got != "is required" {
			t.Errorf("name error = %q", got)
		}
		if got := text(p.id("error-perMinute-error")); got != "is required for enterprise keys" {
			t.Errorf("perMinute error = %q", got)
		}
		if got := text(p.id("error-perDay-error")); got != "is required for enterprise keys" {
			t.Errorf("perDay error = %q", got)
		}
		p = b.post("/staff/keys", url.Values{"name": {"Big"}, "role": {"customer"}, "plan": {"enterprise"}, "perMinute": {"0"}, "perDay": {"x"}}).wantStatus(http.StatusUnprocessableEntity)
		if got := text(p.id("error-perMinute-error")); got != "must be a positive integer" {
			t.Errorf("perMinute error = %q", got)
		}
		if got := text(p.id("error-perDay-error")); got != "must be a positive integer" {
			t.Errorf("perDay error = %q", got)
		}
		if v, _ := p.id("key-name").Attr("value"); v != "Big" {
			t.Errorf("the form lost the name: %q", v)
		}
		p = b.post("/staff/keys", url.Values{"name": {"Big"}, "role": {"boss"}, "plan": {"gold"}}).wantStatus(http.StatusUnprocessableEntity)
		if got := text(p.id("error-plan-error")); got != "must be one of free, pro, business, enterprise" {
			t.Errorf("plan error = %q", got)
		}
		if got := text(p.id("error-role-error")); got != "must be customer or staff" {
			t.Errorf("role error = %q", got)
		}
	})
	t.Run("change plan and limits", func(t *testing.T) {
		p := b.get("/staff/keys/" + itoa(issuedID)).wantStatus(http.StatusOK)
		if v, _ := p.find(`#key-plan option[selected]`).Attr("value"); v != "pro" {
			t.Fatalf("plan field = %q", v)
		}
		p = b.post("/staff/keys/"+itoa(issuedID), url.Values{"name": {"Partner"}, "plan": {"enterprise"}, "perMinute": {"5"}, "perDay": {"50"}}).wantRedirect("/staff/keys")
		b.follow(p).wantText("flash", "is on the enterprise plan: 5/min, 50/day.")
		k, _ := a.store.FindAPIKeyByID(ctx, issuedID)
		if k.Plan != db.PlanEnterprise || k.PerMinute != 5 || k.PerDay != 50 {
			t.Fatalf("key = %+v", k)
		}
		p = b.post("/staff/keys/"+itoa(issuedID), url.Values{"name": {"Partner"}, "plan": {"enterprise"}, "perMinute": {"-3"}, "perDay": {"50"}}).wantStatus(http.StatusUnprocessableEntity)
		if got := text(p.id("error-perMinute-error")); got != "must be a positive integer" {
			t.Errorf("perMinute error = %q", got)
		}
		// Back to a fixed plan: the limits fields are ignored.
		b.post("/staff/keys/"+itoa(issuedID), url.Values{"name": {"Partner"}, "plan": {"business"}, "perMinute": {"5"}, "perDay": {"50"}}).wantRedirect("/staff/keys")
		if k, _ := a.store.FindAPIKeyByID(ctx, issuedID); k.Plan != db.PlanBusiness || k.PerMinute != 1000 {
			t.Fatalf("key = %+v", k)
		}
	})
	t.Run("lift a ban", func(t *testing.T) {
		plain, k := a.issueKey("tiny", db.RoleCustomer, db.PlanEnterprise, 2, 100)
		a.banKey(plain, 2, 2)
		p := b.get("/staff/keys").wantStatus(http.StatusOK)
		row := p.find("#key-" + itoa(k.ID))
		if got := text(row.Find(`[data-testid="key-state"]`)); !contains(got, "banned", "15 min left") {
			t.Fatalf("state = %q", got)
		}
		p = b.hxPost("/staff/keys/"+itoa(k.ID)+"/lift-ban", nil).wantStatus(http.StatusOK)
		if got := text(p.find("#key-" + itoa(k.ID) + ` [data-testid="key-state"]`)); got != "active" {
			t.Fatalf("state after lifting = %q", got)
		}
		if p.Header.Get("HX-Trigger") != "keys-changed" {
			t.Errorf("HX-Trigger = %q", p.Header.Get("HX-Trigger"))
		}
		// The key is not banned any more; its minute is still used up.
		a.do(req{method: "GET", path: "/api/rate-limit", key: plain}).want(t, 200)
		r := a.do(req{method: "GET", path: "/api/pets", key: plain})
		if r.Status == 403 {
			t.Fatalf("still banned after lifting: %s", r.Body)
		}
	})
	t.Run("revoke", func(t *testing.T) {
		plain, k := a.issueKey("doomed", db.RoleCustomer, db.PlanFree, 0, 0)
		p := b.hxPost("/staff/keys/"+itoa(k.ID)+"/revoke", nil).wantStatus(http.StatusOK)
		if got := text(p.find(`[data-testid="key-state"]`)); got != "revoked" {
			t.Fatalf("state = %q", got)
		}
		if p.id("revoke-key").Length() != 0 {
			t.Errorf("a revoked key still offers Revoke")
		}
		a.do(req{method: "GET", path: "/api/pets", key: plain}).want(t, 401, "unauthorized")
		if b.get("/staff/keys").find("#key-"+itoa(k.ID)).Length() != 0 {
			t.Errorf("revoked keys are listed by default")
		}
		if b.get("/staff/keys?revoked=1").find("#key-"+itoa(k.ID)).Length() != 1 {
			t.Errorf("revoked keys are not listed on request")
		}
		b.post("/staff/keys/"+itoa(k.ID), url.Values{"name": {"zombie"}, "plan": {"free"}}).wantStatus(http.StatusNotFound)
		p = b.post("/staff/keys/"+itoa(issuedID)+"/revoke", nil).wantRedirect("/staff/keys")
		b.follow(p).wantText("flash", "Key “Partner” is revoked.")
	})
}
