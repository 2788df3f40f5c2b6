package console_test

import (
	"context"
	"net/http"
	"net/url"
	"petstore/web"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// adminAreas are the console's parts SPEC §16 keeps to admins: API keys
// (and bans), webhooks, the team, the audit log, SPEC §19's emails and
// settings, and SPEC §21's jobs. Everything else is a clerk's too.
var adminAreas = []string{"/staff/keys", "/staff/webhooks", "/staff/team", "/staff/audit", "/staff/emails", "/staff/settings", "/staff/jobs"}

func isAdminPath(path string) bool {
	for _, p := range adminAreas {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// TestClerkRoutes walks every console route the app has (app.GetRoutes):
// a clerk gets the console's 403 page on each route of the admins' areas,
// and any other answer (a page, a redirect, a refusal of the empty form)
// but 403 or a 5xx on every other route. Posts are made as htmx makes them. Its session survives the walk.
func TestClerkRoutes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		boss := a.AddStaffAs("boss", handlerstest.StaffPassword, db.RoleAdmin)
		clerk, _ := a.SignInAs(t, "clara", db.RoleClerk)
		pet := a.SeedPet("Rex", 3)
		_, key := a.IssueKey("partner", db.RoleCustomer, db.PlanFree, 0, 0)
		order, err := a.Store.PlaceOrder(context.Background(), db.Owner{APIKeyID: key.ID}, db.NewOrder{PetID: &pet.ID, Quantity: handlerstest.Ptr(int64(1))})
		if err != nil {
			t.Fatal(err)
		}
		params := map[string]string{
			"petId": itoa(pet.ID), "categoryId": itoa(pet.CategoryID), "orderId": itoa(order.ID),
			"keyId": itoa(key.ID), "staffId": itoa(boss.ID),
		}
		fill := func(path string) string {
			parts := strings.Split(path, "/")
			for i, p := range parts {
				if name, ok := strings.CutPrefix(p, ":"); ok {
					parts[i] = params[name]
					if parts[i] == "" {
						parts[i] = "1"
					}
				}
			}
			return strings.Join(parts, "/")
		}

		var routes []string
		seen := map[string]bool{}
		for _, r := range a.App.GetRoutes(true) {
			if r.Name == web.FallbackName {
				continue // a method the path lacks: 405 or 404
			}
			if !strings.HasPrefix(r.Path, "/staff") || (r.Method != http.MethodGet && r.Method != http.MethodPost) {
				continue
			}
			// Signing in and out is not what a role decides.
			if strings.HasPrefix(r.Path, "/staff/login") || r.Path == "/staff/logout" {
				continue
			}
			k := r.Method + " " + r.Path
			if !seen[k] {
				seen[k] = true
				routes = append(routes, k)
			}
		}
		sort.Strings(routes)
		if len(routes) < 40 {
			t.Fatalf("only %d console routes found: %v", len(routes), routes)
		}
		admins := 0
		for _, k := range routes {
			method, path, _ := strings.Cut(k, " ")
			target := fill(path)
			var status int
			var body string
			switch {
			case path == "/staff/events":
				// A stream: its status line is enough.
				status = streamStatus(t, a, clerk, target)
			case method == http.MethodGet:
				p := clerk.Get(target)
				status, body = p.Status, p.Body
			default:
				// As htmx posts, the token in its header: a route that
				// reads its body part by part (the photo upload) reads no
				// token from an empty form.
				p := clerk.HXPost(target, url.Values{})
				status, body = p.Status, p.Body
			}
			if isAdminPath(path) {
				admins++
				if status != http.StatusForbidden || !strings.Contains(body, "This page is for admins.") {
					t.Errorf("%s %s as a clerk: %d, want the 403 page\n%.300s", method, target, status, body)
				}
				continue
			}
			if status == http.StatusForbidden || status >= 500 {
				t.Errorf("%s %s as a clerk: %d, want it served\n%.300s", method, target, status, body)
			}
		}
		if admins < 20 {
			t.Fatalf("only %d admin routes walked", admins)
		}
		// The walk did not sign the clerk out, and the nav shows no admin entry.
		p := clerk.Get("/staff").WantStatus(http.StatusOK)
		for _, nav := range []string{"nav-keys", "nav-webhooks", "nav-team"} {
			if p.ID(nav).Length() != 0 {
				t.Errorf("a clerk's navigation shows %s", nav)
			}
		}
		if p.ID("nav-account").Length() != 1 || p.ID("nav-inventory").Length() != 1 {
			t.Errorf("a clerk's navigation lacks its own entries")
		}
		// An admin sees them all, and opens the Team page.
		admin, _ := a.SignInAs(t, "ada", db.RoleAdmin)
		p = admin.Get("/staff").WantStatus(http.StatusOK)
		for _, nav := range []string{"nav-keys", "nav-webhooks", "nav-team", "nav-account"} {
			if p.ID(nav).Length() != 1 {
				t.Errorf("an admin's navigation lacks %s", nav)
			}
		}
		admin.Get("/staff/team").WantStatus(http.StatusOK)
	})
}

// streamStatus opens the console's event stream as b on a real connection
// and returns its status.
func streamStatus(t *testing.T, a *handlerstest.App, b *handlerstest.Browser, path string) int {
	t.Helper()
	base := a.Listen()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	for _, c := range b.Cookies {
		req.AddCookie(c)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	res.Body.Close()
	return res.StatusCode
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
