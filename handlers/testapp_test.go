package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers"
	"petstore/web"
	"petstore/web/events"
	"petstore/web/openapi"
	"petstore/web/ratelimit"
)

var (
	validatorOnce sync.Once
	validator     *openapi.Validator
	validatorErr  error
)

// contract is the OpenAPI document every API exchange in these tests is
// checked against, so code and document cannot drift.
func contract(t *testing.T) *openapi.Validator {
	t.Helper()
	validatorOnce.Do(func() { validator, validatorErr = openapi.NewValidator() })
	if validatorErr != nil {
		t.Fatalf("load OpenAPI document: %v", validatorErr)
	}
	return validator
}

// testApp is the real app on a fresh database with three keys.
type testApp struct {
	t        *testing.T
	app      *fiber.App
	store    *db.Store
	handler  *handlers.Handler
	clock    *dbtest.Clock
	start    time.Time // where clock started: 10:00:30 UTC
	staff    string    // staff key, enterprise plan with room to spare
	customer string    // customer key, enterprise plan with room to spare
	other    string    // a second customer
	custID   int64
	// skipContract turns off OpenAPI checking for deliberately
	// undocumented requests (a panic route).
	skipContract bool
}

type appOption func(*handlers.Handler, *ratelimit.Config)

// newAppClock is the test apps' clock: 10:00:30 UTC on the day after the
// present, 30 s into a minute and far from the day's end, so tests that
// move it by minutes or hours stay on one day unless they mean to leave it.
func newAppClock(tb testing.TB) *dbtest.Clock {
	tb.Helper()
	c := dbtest.NewClock(tb)
	c.IntoNextDay(10*time.Hour + 30*time.Second)
	return c
}

// deprecation dates GET /pets/{petId} relative to the clock, as the
// defaults are to a present in 2026: deprecated half a year ago, sunset a
// year from now.
func deprecation(c *dbtest.Clock) handlers.Config {
	now := c.Now()
	return handlers.Config{Deprecated: now.AddDate(0, -6, 0), Sunset: now.AddDate(1, 0, 0)}
}

// at is the time d after midnight UTC on the day the app's clock started,
// so at(10*time.Hour + 30*time.Second) is the start.
func (a *testApp) at(d time.Duration) time.Time {
	return dbtest.NextDay(a.start).Add(-24*time.Hour + d)
}

// minuteReset is when the clock's first minute ends (10:01:00), in Unix seconds.
func (a *testApp) minuteReset() int64 { return a.at(10*time.Hour + time.Minute).Unix() }

// dayReset is when the clock's first day ends (midnight), in Unix seconds.
func (a *testApp) dayReset() int64 { return a.at(24 * time.Hour).Unix() }

// shipDate is a ship date days after the day the clock started, at noon UTC.
func (a *testApp) shipDate(days int) time.Time {
	return a.at(time.Duration(days)*24*time.Hour + 12*time.Hour)
}

// jsonTime is t as the API writes timestamps (RFC 3339 in UTC).
func jsonTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// newTestApp builds the app on SQLite (or open) with a pinned clock: the
// store, the limiter and the handlers all read a.clock.
func newTestApp(t *testing.T, opts ...appOption) *testApp {
	return newTestAppOn(t, dbtest.SQLite, opts...)
}

func newTestAppOn(t *testing.T, open dbtest.Open, opts ...appOption) *testApp {
	t.Helper()
	store := open(t)
	clk := newAppClock(t)
	store.Now = clk.Now
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	hub := events.NewHub(store, logger)
	store.OnEvent(hub.Wake)
	t.Cleanup(hub.Close)
	rlc := ratelimit.Config{Bans: store, Now: clk.Now}
	h := &handlers.Handler{
		Store: store, Logger: logger, Events: hub, Now: clk.Now,
		Sessions: web.NewSessions([][]byte{[]byte("0123456789abcdef0123456789abcdef")}),
		Metrics:  web.NewMetrics(store.DB().DB),
		Config:   deprecation(clk),
	}
	for _, o := range opts {
		o(h, &rlc)
	}
	h.Limiter = ratelimit.New(rlc)
	a := &testApp{t: t, app: handlers.NewApp(h), store: store, handler: h, clock: clk, start: clk.Now()}
	var k *db.APIKey
	a.staff, _ = a.issueKey("staff", db.RoleStaff, db.PlanEnterprise, 100000, 1000000)
	a.customer, k = a.issueKey("customer", db.RoleCustomer, db.PlanEnterprise, 100000, 1000000)
	a.custID = k.ID
	a.other, _ = a.issueKey("other", db.RoleCustomer, db.PlanEnterprise, 100000, 1000000)
	return a
}

func (a *testApp) issueKey(name, role, plan string, perMin, perDay int64) (string, *db.APIKey) {
	a.t.Helper()
	in := db.NewAPIKey{Name: &name, Role: &role, Plan: &plan}
	if plan == db.PlanEnterprise {
		in.PerMinute, in.PerDay = &perMin, &perDay
	}
	k, plain, err := a.store.CreateAPIKey(context.Background(), in)
	if err != nil {
		a.t.Fatalf("issue key: %v", err)
	}
	return plain, k
}

// response is a finished exchange.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r *response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// problem is the Error object.
type problem struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Status    int    `json:"status"`
	RequestID string `json:"requestId"`
	Details   []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"details"`
}

func (r *response) problem(t *testing.T) problem {
	t.Helper()
	var p problem
	r.decode(t, &p)
	return p
}

// req is one request to make.
type req struct {
	method, path, key string
	body              any // string or []byte sent as is; anything else as JSON
	contentType       string
	header            map[string]string
}

// do sends r through app.Test and checks the exchange against the
// OpenAPI document when it is an API call.
func (a *testApp) do(r req) *response {
	a.t.Helper()
	var body []byte
	switch b := r.body.(type) {
	case nil:
	case string:
		body = []byte(b)
	case []byte:
		body = b
	default:
		var err error
		if body, err = json.Marshal(b); err != nil {
			a.t.Fatal(err)
		}
	}
	hr := httptest.NewRequest(r.method, r.path, bytes.NewReader(body))
	if body != nil {
		ct := r.contentType
		if ct == "" {
			ct = "application/json"
		}
		hr.Header.Set("Content-Type", ct)
	}
	if r.key != "" {
		hr.Header.Set("X-API-Key", r.key)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	res, err := a.app.Test(hr, -1)
	if err != nil {
		a.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	resp := &response{Status: res.StatusCode, Header: res.Header, Body: out}
	if strings.HasPrefix(r.path, "/api") && !a.skipContract {
		check := httptest.NewRequest(r.method, r.path, bytes.NewReader(body))
		check.Header = hr.Header.Clone()
		if err := contract(a.t).Check(check, body, resp.Status, resp.Header, resp.Body); err != nil {
			a.t.Errorf("%s %s → %d breaks the OpenAPI contract: %v\nbody: %s", r.method, r.path, resp.Status, err, out)
		}
	}
	return resp
}

// want fails unless the response has the status (and, for errors, code).
func (r *response) want(t *testing.T, status int, code ...string) *response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body: %s", r.Status, status, r.Body)
	}
	if len(code) > 0 {
		if p := r.problem(t); p.Code != code[0] || p.Status != status {
			t.Fatalf("error = %s/%d, want %s/%d (%s)", p.Code, p.Status, code[0], status, r.Body)
		}
	}
	return r
}

func ptr[T any](v T) *T { return &v }

// seedPet makes a category (once) and a pet with stock through the store.
func (a *testApp) seedPet(name string, stock int64) *db.Pet {
	a.t.Helper()
	ctx := context.Background()
	cats, _, _ := a.store.FindCategories(ctx, db.Page{Limit: 1})
	var catID int64
	if len(cats) > 0 {
		catID = cats[0].ID
	} else {
		c, err := a.store.CreateCategory(ctx, db.NewCategory{Name: ptr("Dogs")})
		if err != nil {
			a.t.Fatal(err)
		}
		catID = c.ID
	}
	p, err := a.store.CreatePet(ctx, db.NewPet{Name: &name, CategoryID: &catID})
	if err != nil {
		a.t.Fatal(err)
	}
	if stock != 1 {
		if _, err := a.store.SetInventory(ctx, p.ID, db.InventoryUpdate{Quantity: &stock}); err != nil {
			a.t.Fatal(err)
		}
	}
	p, _ = a.store.FindPetByID(ctx, p.ID)
	return p
}

// listen serves the app on a loopback port for tests that need a real
// connection, and returns its base URL.
func (a *testApp) listen() string {
	a.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		a.t.Fatal(err)
	}
	go func() { _ = a.app.Listener(ln) }()
	a.t.Cleanup(func() { _ = a.app.ShutdownWithTimeout(5 * time.Second) })
	return "http://" + ln.Addr().String()
}
