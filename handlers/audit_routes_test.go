package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"petstore/web"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// The audit log's promise (SPEC §16): every change made through the
// console or the API with a staff key leaves one entry, with who made it.
// The routes are taken from the app itself (app.GetRoutes): every POST,
// PUT, PATCH and DELETE under /api and every POST under /staff. A route
// without a case below fails the test, so a new route cannot forget its
// audit entry.

// auditExcluded are the changing routes this test leaves out, with why.
var auditExcluded = map[string]string{
	"POST /staff/login":  "signing in is audited by the team's sign-in (signin.*), not a change to the store",
	"POST /staff/logout": "signing out changes nothing of the store's; it would also end the test's session",
}

// auditEnv is what the cases work in: the app, a console browser signed in
// as an admin, and a counter for unique names. Cases make what they act
// on through the store, under a context without an origin, so only the
// request itself can write an entry.
type auditEnv struct {
	t   *testing.T
	a   *handlerstest.App
	b   *handlerstest.Browser
	ctx context.Context
	n   int
}

func (e *auditEnv) name(prefix string) string {
	e.n++
	return fmt.Sprintf("%s %d", prefix, e.n)
}

func (e *auditEnv) pet() *db.Pet { return e.a.SeedPet(e.name("Audited"), 5) }

func (e *auditEnv) photo(petID int64) *db.Photo {
	jpg := handlerstest.JPEGOf(e.t, 8, 8)
	ph, err := e.a.Store.AddPhoto(e.ctx, petID, db.NewPhoto{Large: db.PhotoSize{JPEG: jpg, Width: 8, Height: 8}, Thumb: db.PhotoSize{JPEG: jpg, Width: 8, Height: 8}})
	if err != nil {
		e.t.Fatal(err)
	}
	return ph
}

func (e *auditEnv) order() *db.Order {
	p := e.pet()
	o, err := e.a.Store.PlaceOrder(e.ctx, db.Owner{APIKeyID: e.a.CustID}, db.NewOrder{PetID: &p.ID, Quantity: handlerstest.Ptr(int64(1))})
	if err != nil {
		e.t.Fatal(err)
	}
	return o
}

func (e *auditEnv) category() *db.Category {
	c, err := e.a.Store.CreateCategory(e.ctx, db.NewCategory{Name: handlerstest.Ptr(e.name("Kind"))})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *auditEnv) key() *db.APIKey {
	_, k := e.a.IssueKey(e.name("key"), db.RoleCustomer, db.PlanFree, 0, 0)
	return k
}

// bannedKey is a key with a ban in force.
func (e *auditEnv) bannedKey() *db.APIKey {
	k := e.key()
	now := e.a.Clock.Now()
	if err := e.a.Store.CreateBan(e.ctx, k.Subject(), now, now.Add(15*time.Minute)); err != nil {
		e.t.Fatal(err)
	}
	return k
}

// webhook is the one webhook (sweepWebhook) and a delivery of it.
func (e *auditEnv) webhook() (string, string) {
	w, d := sweepWebhook(e.t, e.a)
	return handlerstest.Itoa(w), handlerstest.Itoa(d)
}

// api sends a staff key's request.
// email places a checkout and keeps its confirmation (the app has no
// SMTP server), returning the email's id.
func (e *auditEnv) email() string {
	e.t.Helper()
	pet := e.pet()
	one := int64(1)
	if _, err := e.a.Store.PlaceCheckout(e.ctx, e.name("shopper"), 10, db.NewCheckout{Name: "Ann", Email: "ann@example.com"},
		[]db.NewOrder{{PetID: &pet.ID, Quantity: &one}}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.a.Queue.Relay(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	es, _, err := e.a.Store.FindEmails(e.ctx, db.EmailFilter{Page: db.Page{Limit: 1}})
	if err != nil || len(es) == 0 {
		e.t.Fatalf("no email kept (%v)", err)
	}
	return id(es[0].ID)
}

func (e *auditEnv) api(method, path string, body any) int {
	return e.a.Do(handlerstest.Req{Method: method, Path: path, Key: e.a.Staff, Body: body}).Status
}

// form posts a console form, as a browser without JavaScript does.
func (e *auditEnv) form(path string, kv ...string) int {
	e.b.Get("/staff/").WantStatus(http.StatusOK) // a fresh CSRF token
	return e.b.Post(path, handlerstest.Form(kv...)).Status
}

// runImport runs the job of the import a request queued (with status).
func (e *auditEnv) runImport(status int, importID int64) int {
	if status == http.StatusAccepted || status == http.StatusSeeOther {
		if err := e.a.Handler.Imports.Run(e.ctx, importID); err != nil {
			e.t.Fatal(err)
		}
	}
	return status
}

func id(n int64) string { return handlerstest.Itoa(n) }

// auditCase sends one successful request of a route and names the action
// its entry must have.
type auditCase struct {
	action string
	send   func(e *auditEnv) int
}

// auditCases are the changing routes, by method and template.
var auditCases = map[string]auditCase{
	// The API, with a staff key.
	"POST /api/pets": {db.AuditPetCreate, func(e *auditEnv) int {
		return e.api("POST", "/api/pets", map[string]any{"name": e.name("Pup"), "categoryId": e.pet().CategoryID})
	}},
	// An import's entry is written by its job, for whoever started it.
	"POST /api/pets/import": {db.AuditCatalogImport, func(e *auditEnv) int {
		r := e.a.Do(handlerstest.Req{Method: "POST", Path: "/api/pets/import", Key: e.a.Staff, Body: "name,category\n" + e.name("Imported") + ",Dogs\n", ContentType: "text/csv"})
		var im db.Import
		r.Decode(e.t, &im)
		return e.runImport(r.Status, im.ID)
	}},
	"PUT /api/pets/:petId": {db.AuditPetPrice, func(e *auditEnv) int {
		p := e.pet()
		return e.api("PUT", "/api/pets/"+id(p.ID), map[string]any{"name": p.Name, "categoryId": p.CategoryID, "price": "12.50"})
	}},
	"DELETE /api/pets/:petId": {db.AuditPetDelete, func(e *auditEnv) int { return e.api("DELETE", "/api/pets/"+id(e.pet().ID), nil) }},
	"POST /api/pets/:petId/photos": {db.AuditPhotoAdd, func(e *auditEnv) int {
		return e.a.UploadPhoto(e.pet().ID, "image/jpeg", handlerstest.JPEGOf(e.t, 64, 48)).Status
	}},
	"DELETE /api/pets/:petId/photos/:photoId": {db.AuditPhotoDelete, func(e *auditEnv) int {
		p := e.pet()
		return e.api("DELETE", "/api/pets/"+id(p.ID)+"/photos/"+id(e.photo(p.ID).ID), nil)
	}},
	"POST /api/categories": {db.AuditCategoryCreate, func(e *auditEnv) int {
		return e.api("POST", "/api/categories", map[string]any{"name": e.name("Birds")})
	}},
	"PUT /api/categories/:categoryId": {db.AuditCategoryUpdate, func(e *auditEnv) int {
		return e.api("PUT", "/api/categories/"+id(e.category().ID), map[string]any{"name": e.name("Fish")})
	}},
	"DELETE /api/categories/:categoryId": {db.AuditCategoryDelete, func(e *auditEnv) int {
		return e.api("DELETE", "/api/categories/"+id(e.category().ID), nil)
	}},
	"POST /api/store/orders": {db.AuditOrderCreate, func(e *auditEnv) int {
		return e.api("POST", "/api/store/orders", map[string]any{"petId": e.pet().ID, "quantity": 1})
	}},
	"PATCH /api/store/orders/:orderId": {db.AuditOrderComplete, func(e *auditEnv) int {
		return e.api("PATCH", "/api/store/orders/"+id(e.order().ID), map[string]any{"complete": true})
	}},
	"DELETE /api/store/orders/:orderId": {db.AuditOrderCancel, func(e *auditEnv) int {
		return e.api("DELETE", "/api/store/orders/"+id(e.order().ID), nil)
	}},
	"PUT /api/store/inventory/:petId": {db.AuditInventorySet, func(e *auditEnv) int {
		return e.api("PUT", "/api/store/inventory/"+id(e.pet().ID), map[string]any{"quantity": 7})
	}},
	"POST /api/keys": {db.AuditKeyCreate, func(e *auditEnv) int {
		return e.api("POST", "/api/keys", map[string]any{"name": e.name("ci"), "role": "customer", "plan": "pro"})
	}},
	"PATCH /api/keys/:keyId": {db.AuditKeyUpdate, func(e *auditEnv) int {
		return e.api("PATCH", "/api/keys/"+id(e.key().ID), map[string]any{"plan": "business"})
	}},
	"DELETE /api/keys/:keyId":     {db.AuditKeyRevoke, func(e *auditEnv) int { return e.api("DELETE", "/api/keys/"+id(e.key().ID), nil) }},
	"DELETE /api/keys/:keyId/ban": {db.AuditBanLift, func(e *auditEnv) int { return e.api("DELETE", "/api/keys/"+id(e.bannedKey().ID)+"/ban", nil) }},
	"POST /api/webhooks": {db.AuditWebhookCreate, func(e *auditEnv) int {
		e.webhook() // the only one: room under the cap
		return e.api("POST", "/api/webhooks", map[string]any{"url": "https://example.com/new", "events": []string{"order.created"}})
	}},
	"PATCH /api/webhooks/:webhookId": {db.AuditWebhookUpdate, func(e *auditEnv) int {
		w, _ := e.webhook()
		return e.api("PATCH", "/api/webhooks/"+w, map[string]any{"description": "Stock sync"})
	}},
	"DELETE /api/webhooks/:webhookId": {db.AuditWebhookDelete, func(e *auditEnv) int {
		w, _ := e.webhook()
		return e.api("DELETE", "/api/webhooks/"+w, nil)
	}},
	"POST /api/webhooks/:webhookId/rotate-secret": {db.AuditWebhookRotate, func(e *auditEnv) int {
		w, _ := e.webhook()
		return e.api("POST", "/api/webhooks/"+w+"/rotate-secret", nil)
	}},
	"POST /api/webhooks/:webhookId/test": {db.AuditWebhookTest, func(e *auditEnv) int {
		w, _ := e.webhook()
		return e.api("POST", "/api/webhooks/"+w+"/test", nil)
	}},
	"POST /api/webhooks/:webhookId/deliveries/:deliveryId/retry": {db.AuditWebhookRetry, func(e *auditEnv) int {
		w, d := e.webhook()
		return e.api("POST", "/api/webhooks/"+w+"/deliveries/"+d+"/retry", nil)
	}},

	// The console, signed in as an admin.
	"POST /staff/inventory/:petId": {db.AuditInventorySet, func(e *auditEnv) int {
		return e.form("/staff/inventory/"+id(e.pet().ID), "quantity", "3")
	}},
	"POST /staff/orders/:orderId/complete": {db.AuditOrderComplete, func(e *auditEnv) int {
		return e.form("/staff/orders/" + id(e.order().ID) + "/complete")
	}},
	"POST /staff/orders/:orderId/cancel": {db.AuditOrderCancel, func(e *auditEnv) int {
		return e.form("/staff/orders/" + id(e.order().ID) + "/cancel")
	}},
	"POST /staff/pets": {db.AuditPetCreate, func(e *auditEnv) int {
		return e.form("/staff/pets", "name", e.name("Kit"), "categoryId", id(e.pet().CategoryID), "status", "available", "price", "40.00")
	}},
	"POST /staff/pets/:petId": {db.AuditPetUpdate, func(e *auditEnv) int {
		p := e.pet()
		return e.form("/staff/pets/"+id(p.ID), "name", p.Name+" renamed", "categoryId", id(p.CategoryID))
	}},
	"POST /staff/pets/:petId/delete": {db.AuditPetDelete, func(e *auditEnv) int {
		return e.form("/staff/pets/" + id(e.pet().ID) + "/delete")
	}},
	"POST /staff/import": {db.AuditCatalogImport, func(e *auditEnv) int {
		e.b.Get("/staff/import").WantStatus(http.StatusOK)
		body, ct := handlerstest.ImportForm(e.t, e.b.CSRF, "pets.csv", []byte("name,category\n"+e.name("Imported")+",Dogs\n"))
		p := e.b.Upload("/staff/import", body, ct, false)
		var im db.Import
		e.a.GetJSON(e.t, e.a.Staff, strings.Replace(p.Header.Get("Location"), "/staff/", "/api/", 1), &im)
		return e.runImport(p.Status, im.ID)
	}},
	"POST /staff/pets/:petId/photos": {db.AuditPhotoAdd, func(e *auditEnv) int {
		p := e.pet()
		e.b.Get("/staff/pets/" + id(p.ID) + "/edit").WantStatus(http.StatusOK)
		body, ct := handlerstest.PhotoForm(e.t, e.b.CSRF, handlerstest.UploadFile{Name: "a.jpg", ContentType: "image/jpeg", Data: handlerstest.JPEGOf(e.t, 64, 48)})
		return e.b.Upload("/staff/pets/"+id(p.ID)+"/photos", body, ct, false).Status
	}},
	"POST /staff/pets/:petId/photos/order": {db.AuditPhotoReorder, func(e *auditEnv) int {
		p := e.pet()
		first, second := e.photo(p.ID), e.photo(p.ID)
		e.b.Get("/staff/").WantStatus(http.StatusOK)
		return e.b.Post("/staff/pets/"+id(p.ID)+"/photos/order", url.Values{"photo": {id(second.ID), id(first.ID)}}).Status
	}},
	"POST /staff/pets/:petId/photos/:photoId/delete": {db.AuditPhotoDelete, func(e *auditEnv) int {
		p := e.pet()
		return e.form("/staff/pets/" + id(p.ID) + "/photos/" + id(e.photo(p.ID).ID) + "/delete")
	}},
	"POST /staff/categories": {db.AuditCategoryCreate, func(e *auditEnv) int {
		return e.form("/staff/categories", "name", e.name("Reptiles"))
	}},
	"POST /staff/categories/:categoryId": {db.AuditCategoryUpdate, func(e *auditEnv) int {
		return e.form("/staff/categories/"+id(e.category().ID), "name", e.name("Rodents"), "description", "Small.")
	}},
	"POST /staff/categories/:categoryId/delete": {db.AuditCategoryDelete, func(e *auditEnv) int {
		return e.form("/staff/categories/" + id(e.category().ID) + "/delete")
	}},
	"POST /staff/keys": {db.AuditKeyCreate, func(e *auditEnv) int {
		return e.form("/staff/keys", "name", e.name("shop"), "role", "customer", "plan", "free")
	}},
	"POST /staff/keys/:keyId": {db.AuditKeyUpdate, func(e *auditEnv) int {
		k := e.key()
		return e.form("/staff/keys/"+id(k.ID), "name", k.Name+" renamed", "plan", "pro")
	}},
	"POST /staff/keys/:keyId/revoke": {db.AuditKeyRevoke, func(e *auditEnv) int {
		return e.form("/staff/keys/" + id(e.key().ID) + "/revoke")
	}},
	"POST /staff/keys/:keyId/lift-ban": {db.AuditBanLift, func(e *auditEnv) int {
		return e.form("/staff/keys/" + id(e.bannedKey().ID) + "/lift-ban")
	}},
	"POST /staff/webhooks": {db.AuditWebhookCreate, func(e *auditEnv) int {
		e.webhook()
		return e.form("/staff/webhooks", "url", "https://example.com/console", "events", "*")
	}},
	"POST /staff/webhooks/:webhookId": {db.AuditWebhookUpdate, func(e *auditEnv) int {
		w, _ := e.webhook()
		return e.form("/staff/webhooks/"+w, "url", "https://example.com/moved", "events", "*", "description", "Moved")
	}},
	"POST /staff/webhooks/:webhookId/toggle": {db.AuditWebhookUpdate, func(e *auditEnv) int {
		w, _ := e.webhook()
		return e.form("/staff/webhooks/" + w + "/toggle")
	}},
	"POST /staff/webhooks/:webhookId/rotate": {db.AuditWebhookRotate, func(e *auditEnv) int {
		w, _ := e.webhook()
		return e.form("/staff/webhooks/" + w + "/rotate")
	}},
	"POST /staff/webhooks/:webhookId/test": {db.AuditWebhookTest, func(e *auditEnv) int {
		w, _ := e.webhook()
		return e.form("/staff/webhooks/" + w + "/test")
	}},
	"POST /staff/webhooks/:webhookId/delete": {db.AuditWebhookDelete, func(e *auditEnv) int {
		w, _ := e.webhook()
		return e.form("/staff/webhooks/" + w + "/delete")
	}},
	"POST /staff/webhooks/:webhookId/deliveries/:deliveryId/retry": {db.AuditWebhookRetry, func(e *auditEnv) int {
		w, d := e.webhook()
		return e.form("/staff/webhooks/" + w + "/deliveries/" + d + "/retry")
	}},
	"POST /staff/emails/:emailId/resend": {db.AuditEmailResend, func(e *auditEnv) int {
		return e.form("/staff/emails/" + e.email() + "/resend")
	}},
	"POST /staff/jobs/:jobId/retry": {db.AuditJobRetry, func(e *auditEnv) int {
		e.webhook()
		return e.form("/staff/jobs/" + id(sweepJob(e.t, e.a)) + "/retry")
	}},
	"POST /staff/jobs/:jobId/cancel": {db.AuditJobCancel, func(e *auditEnv) int {
		e.webhook()
		return e.form("/staff/jobs/" + id(sweepJob(e.t, e.a)) + "/cancel")
	}},
	"POST /staff/settings": {db.AuditSettingsUpdate, func(e *auditEnv) int {
		return e.form("/staff/settings", "name", e.name("Shop"), "pickupAddress", "1 Kennel Road", "replyTo", "hi@shop.example")
	}},
	"POST /staff/account/email": {db.AuditStaffEmail, func(e *auditEnv) int {
		return e.form("/staff/account/email", "email", "me@shop.example", "notifyOrders", "on")
	}},
}

// changingRoutes are the app's routes that change things: "METHOD path".
func changingRoutes(app *fiber.App) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range app.GetRoutes(true) {
		if r.Name == web.FallbackName {
			continue // a method the path lacks: 405 or 404
		}
		api := strings.HasPrefix(r.Path, "/api/")
		console := strings.HasPrefix(r.Path, "/staff/")
		changes := (api && (r.Method == fiber.MethodPost || r.Method == fiber.MethodPut || r.Method == fiber.MethodPatch || r.Method == fiber.MethodDelete)) ||
			(console && r.Method == fiber.MethodPost)
		k := r.Method + " " + r.Path
		if changes && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// auditEntries reads the entries written after the one with id after,
// oldest first.
func auditEntries(t *testing.T, a *handlerstest.App, after int64) []*db.AuditEntry {
	t.Helper()
	var out []*db.AuditEntry
	page := db.Page{Limit: db.MaxLimit}
	for {
		es, more, err := a.Store.FindAudit(context.Background(), db.AuditFilter{}, page)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.ID > after {
				out = append([]*db.AuditEntry{e}, out...)
			}
		}
		if !more || len(es) == 0 || es[len(es)-1].ID <= after {
			return out
		}
		page.AfterID = es[len(es)-1].ID
	}
}

// lastAuditID is the newest entry's id, 0 when there is none.
func lastAuditID(t *testing.T, a *handlerstest.App) int64 {
	t.Helper()
	es, _, err := a.Store.FindAudit(context.Background(), db.AuditFilter{}, db.Page{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) == 0 {
		return 0
	}
	return es[0].ID
}

func TestEveryChangeIsAudited(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		ctx := context.Background()
		e := &auditEnv{t: t, a: a, b: a.SignedIn(t), ctx: ctx}
		alice, err := a.Store.FindStaffUserByUsername(ctx, handlerstest.StaffName)
		if err != nil {
			t.Fatal(err)
		}
		staffKey, err := a.Store.Authenticate(ctx, a.Staff)
		if err != nil {
			t.Fatal(err)
		}
		routes := changingRoutes(a.App)
		if len(routes) < 40 {
			t.Fatalf("only %d changing routes found: %v", len(routes), routes)
		}
		for _, route := range routes {
			if why, ok := auditExcluded[route]; ok {
				t.Logf("%s: not in this test: %s", route, why)
				continue
			}
			c, ok := auditCases[route]
			if !ok {
				t.Errorf("%s has no case in auditCases: add one that changes something through it, and the entry it writes", route)
				continue
			}
			before := lastAuditID(t, a)
			status := c.send(e)
			if status < 200 || status >= 400 {
				t.Errorf("%s: status %d, want a success", route, status)
				continue
			}
			entries := auditEntries(t, a, before)
			if len(entries) != 1 {
				t.Errorf("%s: %d audit entries, want exactly 1: %+v", route, len(entries), entries)
				continue
			}
			got := entries[0]
			want := db.KeyActor(staffKey.ID, staffKey.Name)
			if strings.HasPrefix(route, "POST /staff/") {
				want = db.StaffActor(alice.ID, alice.Username)
			}
			if got.Action != c.action || got.Actor != want {
				t.Errorf("%s: entry %s by %+v, want %s by %+v", route, got.Action, got.Actor, c.action, want)
			}
			if got.RequestID == "" || got.IP == "" || got.Target.Type == "" {
				t.Errorf("%s: entry without its request id, address or target: %+v", route, got)
			}
			if !got.At.Equal(a.Clock.Now()) {
				t.Errorf("%s: entry at %s, want the store's clock %s", route, got.At, a.Clock.Now())
			}
		}
		for route := range auditCases {
			found := false
			for _, r := range routes {
				found = found || r == route
			}
			if !found {
				t.Errorf("auditCases has %s, which the app does not route", route)
			}
		}
		// Every entry, read through the API: the app checks each page
		// against the OpenAPI document, so each action's changes hold to
		// AuditEntry (its values to AuditValue).
		read := 0
		for _, page := range a.Pages(t, "/api/audit?limit=100", "id") {
			read += len(page)
		}
		if all := len(auditEntries(t, a, 0)); read != all {
			t.Errorf("GET /api/audit listed %d entries, the store holds %d", read, all)
		}
		wantNoSecrets(t, a)
	})
}

// wantNoSecrets fails when an audit entry holds a secret: a plain key or a
// webhook secret (their prefixes), a key's hash or a webhook's secret as
// stored.
func wantNoSecrets(t *testing.T, a *handlerstest.App) {
	t.Helper()
	var secrets []string
	for _, q := range []string{`SELECT hash FROM api_keys`, `SELECT secret FROM webhooks`,
		`SELECT old_secret FROM webhooks WHERE old_secret IS NOT NULL`, `SELECT password_hash FROM staff_users`} {
		var vs []string
		if err := a.Store.DB().Select(&vs, q); err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, vs...)
	}
	var rows []string
	if err := a.Store.DB().Select(&rows, `SELECT changes FROM audit_log`); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no audit entries to search")
	}
	for _, ch := range rows {
		for _, s := range append([]string{db.KeyPrefix, db.WebhookSecretPrefix}, secrets...) {
			if strings.Contains(ch, s) {
				t.Errorf("an audit entry holds a secret (%.10s…): %s", s, ch)
			}
		}
	}
}
