package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"petstore/web"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// The sweep requests every GET route of the storefront and the console,
// taken from the app itself (app.GetRoutes), so a route added later is
// swept without anyone remembering to: as a page and as htmx, signed in to
// the console and not, with path ids that exist, that do not and that
// cannot, and with hostile query strings. Whatever it sends, the answer is
// never a 5xx: a panic is recovered into a 500, so that catches panics too.

// sweepBadIDs are path ids no route can accept.
var sweepBadIDs = []string{
	"abc", "-1", "0", "1e3", "%00", "%ff", "%20",
	strings.Repeat("x", 300), strings.Repeat("7", 300),
	"9223372036854775808", // int64 overflow
}

// sweepQueries are hostile query strings: text the database cannot hold
// (NUL, bytes that are not UTF-8, control characters), broken cursors and
// numbers, for the parameters the pages read and for some they do not.
var sweepQueries = []string{
	"q=%00", "q=a%00b", "q=%ff%fe", "q=a%01b%7f", "q=%c3", "q=" + strings.Repeat("%e2%80%ae", 200),
	"status=%ff", "status=%00", "status=available%00", "state=%ff", "sort=%00",
	"cursor=garbage", "cursor=%00", "cursor=djE6LTE", "cursor=djE6OTIyMzM3MjAzNjg1NDc3NTgwOA",
	"limit=-1", "limit=1e3", "limit=%00",
	"category=%00", "category=-1", "category=9223372036854775808",
	"after=abc", "after=%00", "before=-1", "pet=%ff", "revoked=%00",
	"next=%00", "next=%ff", "lastEventId=%00", "lastEventId=-1",
	"q=%00&status=%ff&cursor=%00&limit=-1&category=%00",
}

// sweepParam matches a route's path parameters (":petId", ":id?").
var sweepParam = regexp.MustCompile(`:[A-Za-z]+\??|\*|\+`)

func TestSweepPages(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		pet := a.SeedPet("Rex", 3)
		ctx := context.Background()
		order, err := a.Store.PlaceOrder(ctx, db.Owner{APIKeyID: a.CustID}, db.NewOrder{PetID: &pet.ID, Quantity: handlerstest.Ptr(int64(1))})
		if err != nil {
			t.Fatal(err)
		}
		jpg := handlerstest.JPEGOf(t, 8, 8)
		photo, err := a.Store.AddPhoto(ctx, pet.ID, db.NewPhoto{Large: db.PhotoSize{JPEG: jpg, Width: 8, Height: 8}, Thumb: db.PhotoSize{JPEG: jpg, Width: 8, Height: 8}})
		if err != nil {
			t.Fatal(err)
		}
		checkout, err := a.Store.PlaceCheckout(ctx, "sweep", 10, sweepBuyer, []db.NewOrder{{PetID: &pet.ID, Quantity: handlerstest.Ptr(int64(1))}})
		if err != nil {
			t.Fatal(err)
		}
		hook, delivery := sweepWebhook(t, a)
		imported, err := a.Handler.Imports.Create(ctx, strings.NewReader("name,category\nSweep,Dogs\n"))
		if err != nil {
			t.Fatal(err)
		}
		// The valid id of every path parameter the pages use: a route
		// with a parameter not listed here fails the sweep until it is.
		valid := map[string]string{
			"id": handlerstest.Itoa(pet.ID), "petId": handlerstest.Itoa(pet.ID), "categoryId": handlerstest.Itoa(pet.CategoryID),
			"keyId": handlerstest.Itoa(a.CustID), "orderId": handlerstest.Itoa(order.ID), "photoId": handlerstest.Itoa(photo.ID), "checkoutId": handlerstest.Itoa(checkout.ID),
			"webhookId": handlerstest.Itoa(hook), "deliveryId": handlerstest.Itoa(delivery),
			"importId": handlerstest.Itoa(imported.ID), "emailId": handlerstest.Itoa(sweepEmail(t, a)), "jobId": handlerstest.Itoa(sweepJob(t, a)),
		}
		signedIn := a.SignedIn(t) // before listening: it uses app.Test
		var cookies []*http.Cookie
		for _, c := range signedIn.Cookies {
			cookies = append(cookies, c)
		}
		base := a.Listen()
		client := &http.Client{
			Timeout:       20 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}

		routes := sweepRoutes(a.App)
		if len(routes) < 10 {
			t.Fatalf("only %d GET routes found: %v", len(routes), routes)
		}
		t.Logf("GET routes: %v", routes)
		requests := 0
		for _, route := range routes {
			var paths []string
			if !sweepParam.MatchString(route) {
				paths = []string{route}
			} else {
				paths = append(paths, sweepFill(t, route, valid, ""), sweepFill(t, route, valid, "9999999"))
				for _, bad := range sweepBadIDs {
					paths = append(paths, sweepFill(t, route, valid, bad))
				}
			}
			get := func(path string, signedIn ...bool) {
				t.Helper()
				for _, signed := range signedIn {
					for _, htmx := range []bool{false, true} {
						requests++
						status := sweepGet(t, client, base+path, htmx, signed, cookies)
						if status >= 500 {
							t.Errorf("GET %s (htmx %v, signed in %v) → %d", sweepShort(path), htmx, signed, status)
						}
					}
				}
			}
			for _, path := range paths {
				get(path, false, true)
			}
			// Hostile queries go to the route with valid ids, signed in,
			// where the handler gets as far as reading them (signed out,
			// the console stops at its door; the storefront ignores it).
			for _, q := range sweepQueries {
				get(paths[0]+"?"+q, true)
			}
		}
		t.Logf("swept %d routes with %d requests", len(routes), requests)
	})
}

// sweepFields are the form fields the storefront and the console read,
// with a valid value each (ids are filled in per route); a field a route
// does not read is ignored by it.
var sweepFields = []string{"name", "description", "role", "plan", "perMinute", "perDay", "status", "categoryId", "quantity", "pet_id",
	"price", "breed", "birthDate", "email", "phone", "date", "number", "photo", "url", "events"}

// sweepBuyer is a storefront buyer for the checkouts the sweep places.
var sweepBuyer = db.NewCheckout{Name: "Sweep", Email: "sweep@example.com"}

// sweepTexts are hostile form values: what PostgreSQL's text cannot hold,
// control characters, a value past every limit and numbers no field takes.
var sweepTexts = []string{"a\x00b", "\xff\xfe", "\x1b[31mred", "\u0085", strings.Repeat("x", 300), "9223372036854775808", "-1"}

// TestSweepForms posts every form of the storefront and the console (the
// POST routes, from app.GetRoutes) signed in, with each field in turn set
// to each hostile value, and with path ids that cannot be, as plain forms
// and as htmx: never a 5xx. Each route gets fresh rows, so one that
// deletes (a pet, a key) does not blunt the next.
func TestSweepForms(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		// The storefront's posts count against a per-client limit (60 a
		// minute): each comes from another client (X-Forwarded-For from
		// app.Test's peer, trusted here), so the sweep reaches every form
		// instead of the 429 page.
		a := handlerstest.NewOn(t, open, handlerstest.WithProxies(t, "0.0.0.0"))
		b := a.SignedIn(t)
		clients := 0
		newClient := func() {
			clients++
			b.Header["X-Forwarded-For"] = fmt.Sprintf("10.%d.%d.%d", clients>>16&255, clients>>8&255, clients&255)
		}
		ctx := context.Background()
		routes := sweepRoutesOf(a.App, fiber.MethodPost)
		if len(routes) < 10 {
			t.Fatalf("only %d POST routes found: %v", len(routes), routes)
		}
		statuses := map[int]int{}
		for i, route := range routes {
			if route == "/staff/logout" || route == "/staff/login" {
				continue // sign-in is another test's (console_auth_test.go); signing out would end the sweep
			}
			pet := a.SeedPet("Sweep "+handlerstest.Itoa(int64(i)), 50)
			order, err := a.Store.PlaceOrder(ctx, db.Owner{APIKeyID: a.CustID}, db.NewOrder{PetID: &pet.ID, Quantity: handlerstest.Ptr(int64(1))})
			if err != nil {
				t.Fatal(err)
			}
			_, key := a.IssueKey("sweep "+handlerstest.Itoa(int64(i)), db.RoleCustomer, db.PlanFree, 0, 0)
			checkout, err := a.Store.PlaceCheckout(ctx, "sweep", 1000, sweepBuyer, []db.NewOrder{{PetID: &pet.ID, Quantity: handlerstest.Ptr(int64(1))}})
			if err != nil {
				t.Fatal(err)
			}
			jpg := handlerstest.JPEGOf(t, 8, 8)
			photo, err := a.Store.AddPhoto(ctx, pet.ID, db.NewPhoto{Large: db.PhotoSize{JPEG: jpg, Width: 8, Height: 8}, Thumb: db.PhotoSize{JPEG: jpg, Width: 8, Height: 8}})
			if err != nil {
				t.Fatal(err)
			}
			hook, delivery := sweepWebhook(t, a)
			member := a.AddStaffAs("sweep-"+handlerstest.Itoa(int64(i)), handlerstest.StaffPassword, db.RoleClerk)
			valid := map[string]string{
				"id":    handlerstest.Itoa(order.ID), // the storefront's /orders/:id/cancel
				"petId": handlerstest.Itoa(pet.ID), "categoryId": handlerstest.Itoa(pet.CategoryID),
				"keyId": handlerstest.Itoa(key.ID), "orderId": handlerstest.Itoa(order.ID),
				"checkoutId": handlerstest.Itoa(checkout.ID), "photoId": handlerstest.Itoa(photo.ID),
				"webhookId": handlerstest.Itoa(hook), "deliveryId": handlerstest.Itoa(delivery),
				"staffId": handlerstest.Itoa(member.ID), "emailId": handlerstest.Itoa(sweepEmail(t, a)), "jobId": handlerstest.Itoa(sweepJob(t, a)),
			}
			fields := map[string]string{
				"name": "Sweep " + handlerstest.Itoa(int64(i)), "description": "Fine.", "role": db.RoleCustomer, "plan": db.PlanFree,
				"status": db.StatusAvailable, "categoryId": handlerstest.Itoa(pet.CategoryID), "quantity": "1", "pet_id": handlerstest.Itoa(pet.ID),
				"price": "129.00", "breed": "Beagle", "birthDate": a.Clock.Now().AddDate(-1, 0, 0).Format(time.DateOnly),
				"email": sweepBuyer.Email, "phone": "+1 555 0100", "date": a.Clock.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly),
				"number": handlerstest.Itoa(checkout.ID), "photo": handlerstest.Itoa(photo.ID),
				"url": "https://example.com/hook", "events": "*",
			}
			// The token of the area the route belongs to.
			if strings.HasPrefix(route, "/staff") {
				b.Get("/staff/").WantStatus(http.StatusOK)
			} else {
				// The storefront hands htmx its token in hx-headers, on
				// every page with a form (the cart's).
				hx, _ := b.Get("/cart").WantStatus(http.StatusOK).Find("body").Attr("hx-headers")
				var h map[string]string
				if err := json.Unmarshal([]byte(hx), &h); err != nil || h["X-CSRF-Token"] == "" {
					t.Fatalf("the cart carries no CSRF token: %q", hx)
				}
				b.CSRF = h["X-CSRF-Token"]
				// The lookup's cancel acts on a checkout this session
				// proved: prove this route's, and cancel its own order.
				if strings.HasPrefix(route, "/orders/lookup/") {
					newClient()
					proof := url.Values{"number": {handlerstest.Itoa(checkout.ID)}, "email": {sweepBuyer.Email}}
					if p := b.Send(http.MethodPost, "/orders/lookup", proof, false); p.Status != http.StatusSeeOther {
						t.Fatalf("lookup of checkout %d: %d", checkout.ID, p.Status)
					}
					valid["id"] = handlerstest.Itoa(checkout.Orders[0].ID)
				}
			}
			post := func(path string, form url.Values, modes ...bool) {
				t.Helper()
				for _, htmx := range modes {
					newClient()
					p := b.Send(http.MethodPost, path, form, htmx)
					statuses[p.Status]++
					if p.Status >= 500 {
						t.Errorf("POST %s %v (htmx %v) → %d", sweepShort(path), sweepShort(fmt.Sprintf("%q", form)), htmx, p.Status)
					}
					delete(form, "_csrf")
				}
			}
			path := sweepFill(t, route, valid, "")
			// Every field with every value, as a plain form or as htmx in
			// turn (both answer through the same validation; twice the
			// requests would buy little and cost CI a minute under -race).
			n := 0
			for _, field := range sweepFields {
				for _, v := range sweepTexts {
					form := url.Values{}
					for k, fine := range fields {
						form.Set(k, fine)
					}
					form.Set(field, v)
					n++
					post(path, form, n%2 == 0)
				}
			}
			if sweepParam.MatchString(route) {
				for _, bad := range sweepBadIDs {
					post(sweepFill(t, route, valid, bad), url.Values{}, false, true)
				}
			}
		}
		t.Logf("swept %d routes; answers by status: %v", len(routes), statuses)
		// The forms were read, not stopped at the door: refused values are
		// re-shown forms (422) and the rest succeeded or redirected.
		if statuses[http.StatusUnprocessableEntity] == 0 || statuses[http.StatusForbidden] > len(sweepBadIDs)*4 {
			t.Errorf("answers %v: the sweep did not get past CSRF to the forms", statuses)
		}
		if statuses[http.StatusTooManyRequests] > 0 {
			t.Errorf("answers %v: the form limit stopped the sweep", statuses)
		}
	})
}

// sweepWebhook makes the one webhook the sweep's routes act on, with a
// delivery, in place of any earlier one (a store holds at most 20).
func sweepWebhook(t *testing.T, a *handlerstest.App) (webhookID, deliveryID int64) {
	t.Helper()
	ctx := context.Background()
	ws, err := a.Store.FindWebhooks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if err := a.Store.DeleteWebhook(ctx, w.ID); err != nil {
			t.Fatal(err)
		}
	}
	w, err := a.Store.CreateWebhook(ctx, db.NewWebhook{URL: handlerstest.Ptr("https://example.com/hook"), Events: &[]string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := a.Handler.Deliveries.Test(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	return w.ID, d.ID
}

// sweepEmail relays the committed checkouts' events, which keeps their
// emails (no SMTP server), and returns the newest email's id.
func sweepEmail(t *testing.T, a *handlerstest.App) int64 {
	t.Helper()
	ctx := context.Background()
	if _, err := a.Queue.Relay(ctx); err != nil {
		t.Fatal(err)
	}
	es, _, err := a.Store.FindEmails(ctx, db.EmailFilter{Page: db.Page{Limit: 1}})
	if err != nil || len(es) == 0 {
		t.Fatalf("no email to sweep (%v)", err)
	}
	return es[0].ID
}

// sweepJob returns the newest job's id (the delivery's of sweepWebhook,
// in the app's queue, never started), read from River's table.
func sweepJob(t *testing.T, a *handlerstest.App) int64 {
	t.Helper()
	var id int64
	if err := a.Store.DB().GetContext(context.Background(), &id, `SELECT COALESCE(max(id), 0) FROM river_job`); err != nil || id == 0 {
		t.Fatalf("no job to sweep (%v)", err)
	}
	return id
}

// sweepFill puts ids into a route's parameters: bad in every one, or the
// valid id of each when bad is "".
func sweepFill(t *testing.T, route string, valid map[string]string, bad string) string {
	t.Helper()
	return sweepParam.ReplaceAllStringFunc(route, func(m string) string {
		if bad != "" {
			return bad
		}
		id, ok := valid[strings.TrimSuffix(strings.TrimPrefix(m, ":"), "?")]
		if !ok {
			t.Fatalf("route %s: no valid id for %s; add one to the sweep", route, m)
		}
		return id
	})
}

// sweepRoutes lists the app's GET routes outside the API (the fuzz targets
// cover /api), sorted and without duplicates.
func sweepRoutes(app *fiber.App) []string { return sweepRoutesOf(app, fiber.MethodGet) }

// sweepRoutesOf lists the app's routes of one method outside the API.
func sweepRoutesOf(app *fiber.App, method string) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range app.GetRoutes(true) {
		if r.Name == web.FallbackName {
			continue // a method the path lacks: 405 or 404
		}
		if r.Method != method || r.Path == "/api" || strings.HasPrefix(r.Path, "/api/") || seen[r.Path] {
			continue
		}
		seen[r.Path] = true
		out = append(out, r.Path)
	}
	sort.Strings(out)
	return out
}

// sweepGet makes one request and returns its status. A stream (the
// console's events) is closed once its headers arrive.
func sweepGet(t *testing.T, client *http.Client, url string, htmx, signed bool, cookies []*http.Cookie) int {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", sweepShort(url), err)
	}
	if htmx {
		r.Header.Set("HX-Request", "true")
	}
	if signed {
		for _, c := range cookies {
			r.AddCookie(c)
		}
	}
	res, err := client.Do(r)
	if err != nil {
		t.Fatalf("GET %s: %v", sweepShort(url), err)
	}
	defer res.Body.Close()
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		_, _ = io.Copy(io.Discard, res.Body)
	}
	return res.StatusCode
}

// sweepShort keeps failure messages readable when a path is 300 characters.
func sweepShort(s string) string {
	if len(s) > 120 {
		return fmt.Sprintf("%s…(%d bytes)", s[:120], len(s))
	}
	return s
}
