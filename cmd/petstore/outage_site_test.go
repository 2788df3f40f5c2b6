package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"golang.org/x/crypto/bcrypt"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web/openapi"
)

// outageSite and its checks: an instance on a database of its own that
// the tests in outage_database_test.go take away, and what each surface
// must answer meanwhile.

// ownDatabase creates a database of the test's own on the test server (an
// instance may lose it: never petstore_dev), owned by a role of its own
// (limits such as CONNECTION LIMIT bind it, where the superuser is exempt),
// and drops both when the test ends. It returns the database's URL for
// that role, its name and an admin connection to the server's own
// database, which outlives the test's.
func ownDatabase(t *testing.T) (string, string, *sqlx.DB) {
	t.Helper()
	base := dbtest.RequirePostgres(t)
	admin, err := sqlx.Open("postgres", base)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "petstore_out_" + hex.EncodeToString(b)
	if _, err := admin.Exec(`CREATE ROLE ` + name + ` LOGIN`); err != nil {
		t.Fatalf("create role: %v", err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
		if _, err := admin.Exec(`DROP ROLE ` + name); err != nil {
			t.Errorf("drop role %s: %v", name, err)
		}
	})
	if _, err := admin.Exec(`CREATE DATABASE ` + name + ` OWNER ` + name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	u.User = url.User(name)
	return u.String(), name, admin
}

// terminate ends every backend of the database name but the caller's and
// waits (up to 5 s each) until they have gone.
func terminate(t *testing.T, admin *sqlx.DB, name string) {
	t.Helper()
	if _, err := admin.Exec(`SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
		WHERE datname = $1 AND pid <> pg_backend_pid()`, name); err != nil {
		t.Fatalf("terminate backends: %v", err)
	}
}

// outageSite is an instance on its own database, reached through a proxy,
// with an API key and a signed-in console browser.
type outageSite struct {
	n     *node
	name  string
	admin *sqlx.DB
	proxy *tcpProxy
	key   string
	// contract checks API answers against the OpenAPI document.
	contract *openapi.Validator
	api      *http.Client // no cookies
	staff    *http.Client // signed in to the console
	shop     *http.Client // a shopper with a session
}

func newOutageSite(t *testing.T) *outageSite {
	t.Helper()
	direct, name, admin := ownDatabase(t)
	proxied, proxy := viaProxy(t, direct)
	// Connections to the proxy are refused outright while it is cut; the
	// timeout covers a database that accepts and never answers.
	proxied += "&connect_timeout=3"
	cfg := testConfig(t, map[string]string{"DATABASE_URL": proxied, "SESSION_KEYS": testSessionKey})
	var err error
	s := &outageSite{n: startNode(t, "A", cfg, nil, nil), name: name, admin: admin, proxy: proxy}
	s.key, _ = issueKey(t, s.n.srv.Store, "reader", db.RoleStaff, 1_000_000, 10_000_000)
	s.api = newClient(t)
	if s.contract, err = openapi.NewValidator(); err != nil {
		t.Fatal(err)
	}
	s.api.Timeout = 2 * maxAnswer
	s.shop, s.staff = browserClient(t), browserClient(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("outage password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.n.srv.Store.CreateStaffUser(context.Background(), "alice", string(hash)); err != nil {
		t.Fatal(err)
	}
	s.signIn(t)
	s.allUp(t)
	return s
}

// browserClient keeps cookies and does not follow redirects, as a test of
// what each answer is needs.
func browserClient(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	c := newClient(t)
	c.Jar = jar
	c.Timeout = 2 * maxAnswer
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

var csrfField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// signIn signs the staff browser in through the sign-in form.
func (s *outageSite) signIn(t *testing.T) {
	t.Helper()
	page := s.get(t, s.staff, "/staff/login", nil)
	m := csrfField.FindStringSubmatch(string(page.body))
	if page.status != 200 || m == nil {
		t.Fatalf("sign-in form: %d %s", page.status, page.body)
	}
	form := url.Values{"username": {"alice"}, "password": {"outage password"}, "_csrf": {m[1]}}
	res, err := s.staff.PostForm(s.n.base+"/staff/login", form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %d", res.StatusCode)
	}
}

// get fetches path with the client, adding the headers.
func (s *outageSite) get(t *testing.T, c *http.Client, path string, header map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.n.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, header: res.Header, body: body, err: err}
}

// allUp checks that every surface answers normally.
func (s *outageSite) allUp(t *testing.T) {
	t.Helper()
	call(s.api, "GET", s.n.base+"/api/pets", s.key, nil).must(t, 200, nil)
	for _, p := range []struct {
		c    *http.Client
		path string
	}{{s.shop, "/"}, {s.shop, "/staff/login"}, {s.staff, "/staff/inventory"}} {
		if a := s.get(t, p.c, p.path, nil); a.err != nil || a.status != 200 {
			t.Fatalf("GET %s: %d %v", p.path, a.status, a.err)
		}
	}
	if status, _ := ready(t, s.api, s.n); status != 200 {
		t.Fatalf("/readyz: %d", status)
	}
}

// rateLimitHeaders are the headers of SPEC §6 every API answer carries.
var rateLimitHeaders = []string{
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
	"X-RateLimit-Limit-Minute", "X-RateLimit-Remaining-Minute",
	"X-RateLimit-Limit-Day", "X-RateLimit-Remaining-Day",
}

// wantAPIUnavailable checks a 503 unavailable answer of the API: the Error
// object and nothing else, no internals, Retry-After and every standard
// header.
func wantAPIUnavailable(t *testing.T, what string, a answer) {
	t.Helper()
	if a.err != nil || a.status != http.StatusServiceUnavailable {
		t.Errorf("%s: %d %v, want 503: %s", what, a.status, a.err, a.body)
		return
	}
	var body map[string]any
	if err := json.Unmarshal(a.body, &body); err != nil {
		t.Errorf("%s: not JSON: %s", what, a.body)
		return
	}
	if body["code"] != "unavailable" || body["status"] != float64(503) || body["message"] == "" || body["requestId"] != a.header.Get("X-Request-Id") {
		t.Errorf("%s: body %s", what, a.body)
	}
	for k := range body {
		if k != "code" && k != "message" && k != "status" && k != "requestId" {
			t.Errorf("%s: unexpected field %q in %s", what, k, a.body)
		}
	}
	if leaks(string(a.body)) {
		t.Errorf("%s: the body leaks internals: %s", what, a.body)
	}
	wantRetryAfter(t, what, a)
	for _, h := range rateLimitHeaders {
		if v, err := strconv.ParseInt(a.header.Get(h), 10, 64); err != nil || v < 0 {
			t.Errorf("%s: %s = %q", what, h, a.header.Get(h))
		}
	}
	if !strings.HasPrefix(a.header.Get("RateLimit"), `"`) || !strings.Contains(a.header.Get("RateLimit-Policy"), `"minute";q=`) {
		t.Errorf("%s: RateLimit %q, RateLimit-Policy %q", what, a.header.Get("RateLimit"), a.header.Get("RateLimit-Policy"))
	}
	if a.header.Get("X-API-Version") != "1.0.0" || a.header.Get("X-Request-Id") == "" {
		t.Errorf("%s: X-API-Version %q, X-Request-Id %q", what, a.header.Get("X-API-Version"), a.header.Get("X-Request-Id"))
	}
}

// wantPageUnavailable checks a 503 page, or with fragment set the bare
// htmx fragment, of the shop or the console.
func wantPageUnavailable(t *testing.T, what string, a answer, fragment bool) {
	t.Helper()
	if a.err != nil || a.status != http.StatusServiceUnavailable {
		t.Errorf("%s: %d %v, want 503: %.300s", what, a.status, a.err, a.body)
		return
	}
	body := string(a.body)
	if !strings.HasPrefix(a.header.Get("Content-Type"), "text/html") || !strings.Contains(body, `data-status="503"`) ||
		!strings.Contains(body, "Back in a moment") {
		t.Errorf("%s: not the 503 page: %s %.500s", what, a.header.Get("Content-Type"), body)
	}
	if isDoc := strings.Contains(body, "<html"); isDoc == fragment {
		t.Errorf("%s: whole document %v, want %v", what, isDoc, !fragment)
	}
	if leaks(body) {
		t.Errorf("%s: the page leaks internals: %s", what, body)
	}
	wantRetryAfter(t, what, a)
}

func wantRetryAfter(t *testing.T, what string, a answer) {
	t.Helper()
	if ra, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("%s: Retry-After = %q", what, a.header.Get("Retry-After"))
	}
}

// leaks reports driver or network wording in an answer.
func leaks(s string) bool {
	for _, w := range []string{"pq:", "dial", "tcp", "SQLSTATE", "petstore_out_", "terminating", "connection"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// apiCall sends one API request and checks the exchange against the
// OpenAPI document: the 503 must be one the contract describes.
func (s *outageSite) apiCall(t *testing.T, method, path, key string, body any) answer {
	t.Helper()
	a := call(s.api, method, s.n.base+path, key, body)
	if a.err != nil {
		return a
	}
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	req, err := http.NewRequest(method, path, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	if err := s.contract.Check(req, raw, a.status, a.header, a.body); err != nil {
		t.Errorf("%s %s: %v", method, path, err)
	}
	return a
}

// wantAllUnavailable checks every surface while the database is gone.
func (s *outageSite) wantAllUnavailable(t *testing.T) {
	t.Helper()
	began := time.Now()
	wantAPIUnavailable(t, "GET /api/pets with a key", s.apiCall(t, "GET", "/api/pets", s.key, nil))
	wantAPIUnavailable(t, "POST /api/store/orders with a key", s.apiCall(t, "POST", "/api/store/orders", s.key, map[string]any{"petId": 1, "quantity": 1}))
	wantAPIUnavailable(t, "GET /api/categories with a key the server cannot check", s.apiCall(t, "GET", "/api/categories", "psk_"+strings.Repeat("x", 43), nil))
	// Without a key the answer needs no database: 401, still with every
	// header, the request counted against the client's IP.
	anon := s.apiCall(t, "GET", "/api/pets", "", nil)
	if anon.status != http.StatusUnauthorized {
		t.Errorf("GET /api/pets without a key: %d, want 401: %s", anon.status, anon.body)
	}
	for _, h := range append(rateLimitHeaders, "RateLimit", "RateLimit-Policy") {
		if anon.header.Get(h) == "" {
			t.Errorf("GET /api/pets without a key: no %s", h)
		}
	}

	wantPageUnavailable(t, "GET /", s.get(t, s.shop, "/", nil), false)
	wantPageUnavailable(t, "GET /pets/1 (htmx)", s.get(t, s.shop, "/pets/1", map[string]string{"HX-Request": "true"}), true)
	wantPageUnavailable(t, "GET /staff/login", s.get(t, s.shop, "/staff/login", nil), false)
	wantPageUnavailable(t, "GET /staff/inventory signed in", s.get(t, s.staff, "/staff/inventory", nil), false)
	wantPageUnavailable(t, "GET /staff/orders signed in (htmx)", s.get(t, s.staff, "/staff/orders", map[string]string{"HX-Request": "true"}), true)

	if status, r := ready(t, s.api, s.n); status != 503 || r.Database != "down" {
		t.Errorf("/readyz: %d %+v, want 503, database down", status, r)
	}
	if d := time.Since(began); d > 10*maxAnswer {
		t.Errorf("the checks took %s", d)
	}
	if strings.Contains(s.n.logs.String(), `"status":500`) {
		t.Errorf("a 500 was logged:\n%s", lastLines(s.n.logs.String(), 20))
	}
}

// waitRecovered waits for /readyz, then checks every surface again.
func (s *outageSite) waitRecovered(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if status, _ := ready(t, s.api, s.n); status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz did not return to 200 within 15 s of the database coming back")
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.allUp(t)
}
