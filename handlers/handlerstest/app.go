package handlerstest

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
	"golang.org/x/crypto/bcrypt"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers"
	"petstore/web"
	"petstore/web/browser"
	"petstore/web/email"
	"petstore/web/events"
	"petstore/web/imports"
	"petstore/web/openapi"
	"petstore/web/photo"
	"petstore/web/queue"
	"petstore/web/ratelimit"
	"petstore/web/webhooks"
)

// CountRows counts a table's rows straight from the database.
func CountRows(t *testing.T, a *App, table string) int {
	t.Helper()
	var n int
	if err := a.Store.DB().GetContext(context.Background(), &n, `SELECT count(*) FROM `+table); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

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

// App is the real app on a fresh database with three keys.
type App struct {
	T       *testing.T
	App     *fiber.App
	Store   *db.Store
	Handler *handlers.Handler
	// Queue is the app's queue, never started: its jobs stay in river_job,
	// and a test that wants an event's webhook deliveries relays them
	// (Queue.Relay).
	Queue    *queue.Queue
	Clock    *dbtest.Clock
	Start    time.Time // where clock started: 10:00:30 UTC
	Staff    string    // staff key, enterprise plan with room to spare
	Customer string    // customer key, enterprise plan with room to spare
	Other    string    // a second customer
	CustID   int64
	// skipContract turns off OpenAPI checking for deliberately
	// undocumented requests (a panic route).
	SkipContract bool
}

// Option changes the app New builds: its handler's fields or its
// limiter's configuration.
type Option func(*handlers.Handler, *ratelimit.Config)

// NewAppClock is the test apps' clock: 10:00:30 UTC on the day after the
// present, 30 s into a minute and far from the day's end, so tests that
// move it by minutes or hours stay on one day unless they mean to leave it.
func NewAppClock(tb testing.TB) *dbtest.Clock {
	tb.Helper()
	c := dbtest.NewClock(tb)
	c.IntoNextDay(10*time.Hour + 30*time.Second)
	return c
}

// Deprecation dates GET /pets/{petId} relative to the clock, as the
// defaults are to a present in 2026: deprecated half a year ago, sunset a
// year from now.
func Deprecation(c *dbtest.Clock) handlers.Config {
	now := c.Now()
	return handlers.Config{Deprecated: now.AddDate(0, -6, 0), Sunset: now.AddDate(1, 0, 0)}
}

// At is the time d after midnight UTC on the day the app's clock started,
// so at(10*time.Hour + 30*time.Second) is the start.
func (a *App) At(d time.Duration) time.Time {
	return dbtest.NextDay(a.Start).Add(-24*time.Hour + d)
}

// MinuteReset is when the clock's first minute ends (10:01:00), in Unix seconds.
func (a *App) MinuteReset() int64 { return a.At(10*time.Hour + time.Minute).Unix() }

// DayReset is when the clock's first day ends (midnight), in Unix seconds.
func (a *App) DayReset() int64 { return a.At(24 * time.Hour).Unix() }

// ShipDate is a ship date days after the day the clock started, at noon UTC.
func (a *App) ShipDate(days int) time.Time {
	return a.At(time.Duration(days)*24*time.Hour + 12*time.Hour)
}

// JSONTime is t as the API writes timestamps (RFC 3339 in UTC).
func JSONTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// New builds the app on SQLite (or open) with a pinned clock: the
// store, the limiter and the handlers all read a.Clock.
func New(t *testing.T, opts ...Option) *App {
	return NewOn(t, dbtest.SQLite, opts...)
}

// NewOn is New on the database open makes (dbtest.SQLite,
// dbtest.Postgres).
func NewOn(t *testing.T, open dbtest.Open, opts ...Option) *App {
	t.Helper()
	store := open(t)
	clk := NewAppClock(t)
	store.Now = clk.Now
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	hub := events.NewHub(store, logger)
	store.OnEvent(hub.Wake)
	t.Cleanup(hub.Close)
	rlc := ratelimit.Config{Bans: store, Now: clk.Now}
	h := &handlers.Handler{
		Store: store, Logger: logger, Events: hub, Now: clk.Now,
		Sessions: browser.NewSessions([][]byte{[]byte("0123456789abcdef0123456789abcdef")}),
		Metrics:  web.NewMetrics(store.DB().DB),
		Config:   Deprecation(clk),
	}
	h.Metrics.WatchOrderBatches(store.OrderBatches)
	// Staff passwords set in the console hash at bcrypt's lowest cost:
	// the default takes most of a second under the race detector.
	h.Config.PasswordCost = bcrypt.MinCost
	// Decoding a photo under the race detector takes many times as long.
	h.Config.PhotoLimits.Timeout = 2 * time.Minute
	// The app's photo worker, made here so that a test can keep it busy
	// (a.Handler.Photos.Enter).
	h.Photos = photo.NewWorker()
	// The app's kinds of job over a queue that is never started, made here
	// so that a test can run an import's job (a.Handler.Imports.Run) or
	// relay events (a.Queue.Relay) itself.
	q := queue.New(store, queue.Config{Logger: logger})
	imp, err := imports.New(store, q, logger)
	if err != nil {
		t.Fatal(err)
	}
	h.Imports, h.Queue = imp, q
	if h.Deliveries, err = webhooks.New(q, webhooks.Config{Store: store, Now: clk.Now, Logger: logger}); err != nil {
		t.Fatal(err)
	}
	// Emails are kept (no SMTP server): a.Queue.Relay writes them.
	if h.Emails, err = email.New(q, email.Config{Store: store, Now: clk.Now, Logger: logger, BaseURL: "http://shop.test"}); err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		o(h, &rlc)
	}
	h.Limiter = ratelimit.New(rlc)
	app, err := handlers.NewApp(h)
	if err != nil {
		t.Fatal(err)
	}
	a := &App{T: t, App: app, Store: store, Handler: h, Queue: q, Clock: clk, Start: clk.Now()}
	var k *db.APIKey
	a.Staff, _ = a.IssueKey("staff", db.RoleStaff, db.PlanEnterprise, 100000, 1000000)
	a.Customer, k = a.IssueKey("customer", db.RoleCustomer, db.PlanEnterprise, 100000, 1000000)
	a.CustID = k.ID
	a.Other, _ = a.IssueKey("other", db.RoleCustomer, db.PlanEnterprise, 100000, 1000000)
	return a
}

// IssueKey creates an API key straight in the store and returns its
// plain form; perMin and perDay count for the enterprise plan.
func (a *App) IssueKey(name, role, plan string, perMin, perDay int64) (string, *db.APIKey) {
	a.T.Helper()
	in := db.NewAPIKey{Name: &name, Role: &role, Plan: &plan}
	if plan == db.PlanEnterprise {
		in.PerMinute, in.PerDay = &perMin, &perDay
	}
	k, plain, err := a.Store.CreateAPIKey(context.Background(), in)
	if err != nil {
		a.T.Fatalf("issue key: %v", err)
	}
	return plain, k
}

// Response is a finished exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Decode reads the JSON body into v.
func (r *Response) Decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Problem is the Error object.
type Problem struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Status    int    `json:"status"`
	RequestID string `json:"requestId"`
	Details   []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"details"`
}

// Problem decodes the body as the Error object.
func (r *Response) Problem(t *testing.T) Problem {
	t.Helper()
	var p Problem
	r.Decode(t, &p)
	return p
}

// Req is one request to make.
type Req struct {
	Method, Path, Key string
	Body              any // string or []byte sent as is; anything else as JSON
	ContentType       string
	Header            map[string]string
}

// Do sends r through app.Test and checks the exchange against the
// OpenAPI document when it is an API call.
func (a *App) Do(r Req) *Response {
	a.T.Helper()
	var body []byte
	switch b := r.Body.(type) {
	case nil:
	case string:
		body = []byte(b)
	case []byte:
		body = b
	default:
		var err error
		if body, err = json.Marshal(b); err != nil {
			a.T.Fatal(err)
		}
	}
	hr := httptest.NewRequest(r.Method, r.Path, bytes.NewReader(body))
	if body != nil {
		ct := r.ContentType
		if ct == "" {
			ct = "application/json"
		}
		hr.Header.Set("Content-Type", ct)
	}
	if r.Key != "" {
		hr.Header.Set("X-API-Key", r.Key)
	}
	for k, v := range r.Header {
		hr.Header.Set(k, v)
	}
	res, err := a.App.Test(hr, -1)
	if err != nil {
		a.T.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	resp := &Response{Status: res.StatusCode, Header: res.Header, Body: out}
	if strings.HasPrefix(r.Path, "/api") && !a.SkipContract {
		check := httptest.NewRequest(r.Method, r.Path, bytes.NewReader(body))
		check.Header = hr.Header.Clone()
		if err := contract(a.T).Check(check, body, resp.Status, resp.Header, resp.Body); err != nil {
			a.T.Errorf("%s %s → %d breaks the OpenAPI contract: %v\nbody: %s", r.Method, r.Path, resp.Status, err, out)
		}
	}
	return resp
}

// Want fails unless the response has the status (and, for errors, code).
func (r *Response) Want(t *testing.T, status int, code ...string) *Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body: %s", r.Status, status, r.Body)
	}
	if len(code) > 0 {
		if p := r.Problem(t); p.Code != code[0] || p.Status != status {
			t.Fatalf("error = %s/%d, want %s/%d (%s)", p.Code, p.Status, code[0], status, r.Body)
		}
	}
	return r
}

// Ptr is a pointer to v, for the store's optional fields.
func Ptr[T any](v T) *T { return &v }

// SeedPet makes a category (once) and a pet with stock through the store.
func (a *App) SeedPet(name string, stock int64) *db.Pet {
	a.T.Helper()
	ctx := context.Background()
	cats, _, _ := a.Store.FindCategories(ctx, db.Page{Limit: 1})
	var catID int64
	if len(cats) > 0 {
		catID = cats[0].ID
	} else {
		c, err := a.Store.CreateCategory(ctx, db.NewCategory{Name: Ptr("Dogs")})
		if err != nil {
			a.T.Fatal(err)
		}
		catID = c.ID
	}
	p, err := a.Store.CreatePet(ctx, db.NewPet{Name: &name, CategoryID: &catID})
	if err != nil {
		a.T.Fatal(err)
	}
	if stock != 1 {
		if _, err := a.Store.SetInventory(ctx, p.ID, db.InventoryUpdate{Quantity: &stock}); err != nil {
			a.T.Fatal(err)
		}
	}
	p, _ = a.Store.FindPetByID(ctx, p.ID)
	return p
}

// Listen serves the app on a loopback port for tests that need a real
// connection, and returns its base URL. It serves as the product does,
// closing connections with a lingering close (web.Lingering).
func (a *App) Listen() string {
	a.T.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		a.T.Fatal(err)
	}
	go func() { _ = a.App.Listener(web.Lingering(ln)) }()
	a.T.Cleanup(func() { _ = a.App.ShutdownWithTimeout(5 * time.Second) })
	return "http://" + ln.Addr().String()
}
