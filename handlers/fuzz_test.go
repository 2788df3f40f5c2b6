package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers"
	"petstore/handlers/handlerstest"
	"petstore/web"
	"petstore/web/browser"
	"petstore/web/events"
	"petstore/web/ratelimit"
)

// The fuzz targets send hostile input through the real app: every JSON body
// the API accepts and every query parameter. Whatever the input, the answer
// is never a 5xx, a 4xx is the Error object with the status its code
// belongs to, a body that is not UTF-8 JSON is a 400, and every exchange
// passes the OpenAPI contract check (a request the document rejects must
// not succeed). Their seed corpora (testdata/fuzz/FuzzXxx) run as ordinary
// tests; `go test -fuzz FuzzNewPet ./handlers` explores further. Every
// input goes to the app on SQLite and on PostgreSQL (required in CI),
// whose text cannot hold NUL or bytes that are not UTF-8.

// statusOfCode is SPEC §2's table of error codes.
var statusOfCode = map[string]int{
	"bad_request": 400, "unauthorized": 401, "forbidden": 403, "api_key_banned": 403, "not_found": 404,
	"method_not_allowed": 405, "insufficient_stock": 409, "pet_not_available": 409, "invalid_transition": 409,
	"order_complete": 409, "category_exists": 409, "category_in_use": 409, "pet_has_open_orders": 409,
	"idempotency_in_progress": 409, "endpoint_sunset": 410, "payload_too_large": 413,
	"unsupported_media_type": 415, "validation_failed": 422, "idempotency_key_reused": 422, "rate_limited": 429,
}

// fuzzApp is the real app for one fuzz target on one database, built once
// per target (not per input), with targets for the path ids.
type fuzzApp struct {
	*handlerstest.App
	db                   string // which database: named in failures
	pet, order, spareKey int64
}

// newFuzzApps builds the app for a fuzz target on SQLite and, when it is
// configured (always in CI), on PostgreSQL. dbtest.Each cannot serve here:
// a fuzz target has one f.Fuzz, so every input is sent to each app in turn.
func newFuzzApps(f *testing.F) []*fuzzApp {
	f.Helper()
	apps := []*fuzzApp{newFuzzApp(f, "sqlite", dbtest.SQLite)}
	if os.Getenv(dbtest.PostgresEnv) == "" && os.Getenv("CI") != "true" {
		f.Logf("%s not set: fuzzing on SQLite only", dbtest.PostgresEnv)
		return apps
	}
	return append(apps, newFuzzApp(f, "postgres", dbtest.Postgres))
}

// newFuzzApp builds the app the way handlerstest.New does, but for a *testing.F:
// a staff key whose limits no fuzzing run exhausts, a pet with plenty of
// stock, an order and a spare key for PATCH /keys to change. Its clock
// stands at the real present, GET /pets/{petId} between its deprecation
// and its sunset.
func newFuzzApp(f *testing.F, name string, open dbtest.Open) *fuzzApp {
	f.Helper()
	store := open(f)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	hub := events.NewHub(store, logger)
	store.OnEvent(hub.Wake)
	f.Cleanup(hub.Close)
	clk := handlerstest.NewAppClock(f)
	store.Now = clk.Now
	h := &handlers.Handler{
		Store: store, Logger: logger, Events: hub, Now: clk.Now,
		Limiter:  ratelimit.New(ratelimit.Config{Bans: store, Now: clk.Now}),
		Sessions: browser.NewSessions([][]byte{[]byte("0123456789abcdef0123456789abcdef")}),
		Config:   handlerstest.Deprecation(clk),
	}
	app, err := handlers.NewApp(h)
	if err != nil {
		f.Fatal(err)
	}
	a := &fuzzApp{App: &handlerstest.App{App: app, Store: store, Handler: h, Clock: clk, Start: clk.Now()}, db: name}
	ctx := context.Background()
	key := func(name, role string) (string, int64) {
		plan, lots := db.PlanEnterprise, int64(1_000_000_000)
		k, plain, err := store.CreateAPIKey(ctx, db.NewAPIKey{Name: &name, Role: &role, Plan: &plan, PerMinute: &lots, PerDay: &lots})
		if err != nil {
			f.Fatal(err)
		}
		return plain, k.ID
	}
	a.Staff, _ = key("staff", db.RoleStaff)
	_, a.spareKey = key("spare", db.RoleCustomer)
	cat, err := store.CreateCategory(ctx, db.NewCategory{Name: handlerstest.Ptr("Dogs")})
	if err != nil {
		f.Fatal(err)
	}
	pet, err := store.CreatePet(ctx, db.NewPet{Name: handlerstest.Ptr("Rex"), CategoryID: &cat.ID})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := store.SetInventory(ctx, pet.ID, db.InventoryUpdate{Quantity: handlerstest.Ptr(int64(db.MaxInventoryQuantity))}); err != nil {
		f.Fatal(err)
	}
	o, err := store.PlaceOrder(ctx, db.Owner{APIKeyID: 1}, db.NewOrder{PetID: &pet.ID, Quantity: handlerstest.Ptr(int64(1))})
	if err != nil {
		f.Fatal(err)
	}
	a.pet, a.order = pet.ID, o.ID
	return a
}

// checkAnswer fails unless the answer is below 500 and, when it is a 4xx,
// the Error object whose code belongs to the status.
func checkAnswer(t *testing.T, what string, r *handlerstest.Response) {
	t.Helper()
	if r.Status >= 500 {
		t.Fatalf("%s → %d: %s", what, r.Status, r.Body)
	}
	if r.Status < 400 {
		return
	}
	var p handlerstest.Problem
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatalf("%s → %d without the Error object: %s", what, r.Status, r.Body)
	}
	if p.Status != r.Status || p.Message == "" || statusOfCode[p.Code] != r.Status {
		t.Fatalf("%s → %d with Error %+v: wrong code or status", what, r.Status, p)
	}
}

// fuzzBody runs a target that sends each input as the JSON body of
// method path(a), with a staff key.
func fuzzBody(f *testing.F, method string, path func(a *fuzzApp) string, valid string) {
	apps := newFuzzApps(f)
	f.Add([]byte(valid))
	f.Fuzz(func(t *testing.T, body []byte) {
		if body == nil {
			body = []byte{} // an empty body still says it is JSON
		}
		for _, a := range apps {
			a.T = t
			p := path(a)
			what := a.db + ": " + method + " " + p
			r := a.Do(handlerstest.Req{Method: method, Path: p, Key: a.Staff, Body: body})
			checkAnswer(t, what, r)
			malformed := !utf8.Valid(body) || !json.Valid(body)
			if malformed && len(body) <= web.MaxBody && r.Status != 400 {
				t.Fatalf("%s with a body that is not UTF-8 JSON → %d, want 400: %q", what, r.Status, body)
			}
			if len(body) > web.MaxBody && r.Status != 413 {
				t.Fatalf("%s with %d bytes → %d, want 413", what, len(body), r.Status)
			}
		}
	})
}

func (a *fuzzApp) petPath() string   { return "/api/pets/" + handlerstest.Itoa(a.pet) }
func (a *fuzzApp) orderPath() string { return "/api/store/orders/" + handlerstest.Itoa(a.order) }

// FuzzNewPet fuzzes the NewPet body of POST /pets.
func FuzzNewPet(f *testing.F) {
	fuzzBody(f, "POST", func(*fuzzApp) string { return "/api/pets" },
		`{"name":"Rex","categoryId":1,"price":"129.5","description":"Calm.\nKind.","breed":"Labrador","birthDate":"2020-05-01"}`)
}

// FuzzUpdatePet fuzzes the NewPet body of PUT /pets/{petId}.
func FuzzUpdatePet(f *testing.F) {
	fuzzBody(f, "PUT", (*fuzzApp).petPath, `{"name":"Rex","categoryId":1,"status":"available","price":"0","description":null,"breed":"Mix"}`)
}

// FuzzNewCategory fuzzes the NewCategory body of POST /categories.
func FuzzNewCategory(f *testing.F) {
	fuzzBody(f, "POST", func(*fuzzApp) string { return "/api/categories" }, `{"name":"Cats","description":"Independent."}`)
}

// seedShipDate is a valid ship date for the seed inputs: a week after the
// present, in whole seconds.
func seedShipDate(f *testing.F) string {
	return dbtest.Present(f).AddDate(0, 0, 7).Truncate(time.Second).Format(time.RFC3339)
}

// FuzzPlaceOrder fuzzes the Order body of POST /store/orders.
func FuzzPlaceOrder(f *testing.F) {
	fuzzBody(f, "POST", func(*fuzzApp) string { return "/api/store/orders" }, `{"petId":1,"quantity":1,"shipDate":"`+seedShipDate(f)+`"}`)
}

// FuzzUpdateOrder fuzzes the body of PATCH /store/orders/{orderId}.
func FuzzUpdateOrder(f *testing.F) {
	fuzzBody(f, "PATCH", (*fuzzApp).orderPath, `{"shipDate":"`+seedShipDate(f)+`"}`)
}

// FuzzInventoryUpdate fuzzes the InventoryUpdate body of PUT /store/inventory/{petId}.
func FuzzInventoryUpdate(f *testing.F) {
	fuzzBody(f, "PUT", func(a *fuzzApp) string { return "/api/store/inventory/" + handlerstest.Itoa(a.pet) }, `{"quantity":1000000}`)
}

// FuzzNewAPIKey fuzzes the NewApiKey body of POST /keys.
func FuzzNewAPIKey(f *testing.F) {
	fuzzBody(f, "POST", func(*fuzzApp) string { return "/api/keys" }, `{"name":"ci","role":"customer","plan":"enterprise","perMinute":10,"perDay":100}`)
}

// FuzzUpdateAPIKey fuzzes the partial NewApiKey body of PATCH /keys/{keyId}.
func FuzzUpdateAPIKey(f *testing.F) {
	fuzzBody(f, "PATCH", func(a *fuzzApp) string { return "/api/keys/" + handlerstest.Itoa(a.spareKey) }, `{"plan":"pro"}`)
}

// FuzzQuery fuzzes the query parameters of every list operation: each
// input is sent, properly encoded, to all of them.
func FuzzQuery(f *testing.F) {
	apps := newFuzzApps(f)
	f.Add("20", "", "available", "1", "rex", "1,2", "true", "1")
	f.Fuzz(func(t *testing.T, limit, cursor, status, categoryID, q, ids, complete, petID string) {
		query := func(kv ...string) string {
			v := url.Values{}
			for i := 0; i < len(kv); i += 2 {
				if kv[i+1] != "" {
					v.Set(kv[i], kv[i+1])
				}
			}
			return v.Encode()
		}
		page := []string{"limit", limit, "cursor", cursor}
		for _, a := range apps {
			a.T = t
			for _, path := range []string{
				"/api/pets?" + query(append(page, "status", status, "categoryId", categoryID, "q", q, "ids", ids)...),
				"/api/store/orders?" + query(append(page, "complete", complete, "petId", petID)...),
				"/api/store/inventory?" + query(append(page, "status", status)...),
				"/api/categories?" + query(page...),
				"/api/keys?" + query(page...),
			} {
				r := a.Do(handlerstest.Req{Method: "GET", Path: path, Key: a.Staff})
				checkAnswer(t, a.db+": GET "+path, r)
				if r.Status == 200 && !strings.HasPrefix(string(r.Body), "[") {
					t.Fatalf("%s: GET %s → 200 that is not a list: %s", a.db, path, r.Body)
				}
			}
		}
	})
}

// FuzzRawQuery sends each input as the raw query string of GET /pets and
// GET /store/orders: repeated, empty and oddly escaped parameters. Only
// bytes a request line cannot carry are escaped.
func FuzzRawQuery(f *testing.F) {
	apps := newFuzzApps(f)
	f.Add("status=available&status=sold&limit=1")
	f.Fuzz(func(t *testing.T, raw string) {
		var b strings.Builder
		for _, c := range []byte(raw) {
			if c <= ' ' || c >= 0x7f || c == '#' {
				b.WriteString(url.QueryEscape(string([]byte{c})))
				continue
			}
			b.WriteByte(c)
		}
		for _, a := range apps {
			a.T = t
			for _, path := range []string{"/api/pets?" + b.String(), "/api/store/orders?" + b.String()} {
				r := a.Do(handlerstest.Req{Method: "GET", Path: path, Key: a.Staff})
				checkAnswer(t, a.db+": GET "+path, r)
			}
		}
	})
}
