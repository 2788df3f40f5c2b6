package handlers_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"petstore/db"
	"petstore/web"
)

// TestAPIConventions covers SPEC §2: the Error object on every error path
// and the headers on every answer.
func TestAPIConventions(t *testing.T) {
	a := newTestApp(t)
	pet := a.seedPet("Rex", 3)
	petPath := "/api/pets/" + itoa(pet.ID)
	cases := []struct {
		name       string
		req        req
		wantStatus int
		wantCode   string
	}{
		{"unknown route without key", req{method: "GET", path: "/api/nope"}, 404, "not_found"},
		{"unknown route with key", req{method: "GET", path: "/api/nope", key: a.staff}, 404, "not_found"},
		{"wrong method", req{method: "PATCH", path: "/api/pets", key: a.staff}, 405, "method_not_allowed"},
		{"no key", req{method: "GET", path: "/api/pets"}, 401, "unauthorized"},
		{"unknown key", req{method: "GET", path: "/api/pets", key: "psk_nope"}, 401, "unauthorized"},
		{"customer on staff op", req{method: "POST", path: "/api/categories", key: a.customer, body: map[string]any{"name": "x"}}, 403, "forbidden"},
		{"malformed JSON", req{method: "POST", path: "/api/categories", key: a.staff, body: `{"name":`}, 400, "bad_request"},
		{"unknown field", req{method: "POST", path: "/api/categories", key: a.staff, body: `{"name":"x","colour":"red"}`}, 400, "bad_request"},
		{"wrong type", req{method: "POST", path: "/api/categories", key: a.staff, body: `{"name":42}`}, 400, "bad_request"},
		{"trailing data", req{method: "POST", path: "/api/categories", key: a.staff, body: `{"name":"x"} {}`}, 400, "bad_request"},
		{"not an object", req{method: "POST", path: "/api/categories", key: a.staff, body: `[1,2]`}, 400, "bad_request"},
		{"empty body", req{method: "POST", path: "/api/categories", key: a.staff, body: ``, contentType: "application/json", header: map[string]string{"Content-Type": "application/json"}}, 400, "bad_request"},
		{"invalid UTF-8", req{method: "POST", path: "/api/categories", key: a.staff, body: []byte("{\"name\":\"\xff\xfe\"}")}, 400, "bad_request"},
		{"bad path id", req{method: "GET", path: "/api/categories/abc", key: a.staff}, 400, "bad_request"},
		{"negative path id", req{method: "GET", path: "/api/categories/-1", key: a.staff}, 400, "bad_request"},
		{"overflowing path id", req{method: "GET", path: "/api/categories/99999999999999999999", key: a.staff}, 400, "bad_request"},
		{"bad cursor", req{method: "GET", path: "/api/pets?cursor=zzz", key: a.staff}, 400, "bad_request"},
		{"limit too big", req{method: "GET", path: "/api/pets?limit=101", key: a.staff}, 400, "bad_request"},
		{"limit zero", req{method: "GET", path: "/api/pets?limit=0", key: a.staff}, 400, "bad_request"},
		{"unknown status", req{method: "GET", path: "/api/pets?status=lost", key: a.staff}, 400, "bad_request"},
		{"wrong media type", req{method: "POST", path: "/api/categories", key: a.staff, body: "name=x", contentType: "application/x-www-form-urlencoded"}, 415, "unsupported_media_type"},
		{"too large", req{method: "POST", path: "/api/categories", key: a.staff, body: `{"name":"` + strings.Repeat("x", 70<<10) + `"}`}, 413, "payload_too_large"},
		{"invalid value", req{method: "POST", path: "/api/categories", key: a.staff, body: `{"name":"   "}`}, 422, "validation_failed"},
		{"missing pet", req{method: "GET", path: "/api/store/inventory/999999", key: a.staff}, 404, "not_found"},
		{"deprecated op", req{method: "GET", path: petPath, key: a.customer}, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do(tc.req)
			if tc.wantCode != "" {
				r.want(t, tc.wantStatus, tc.wantCode)
				p := r.problem(t)
				if p.Message == "" || p.RequestID != r.Header.Get("X-Request-Id") {
					t.Errorf("problem = %+v; want a message and requestId = X-Request-Id %q", p, r.Header.Get("X-Request-Id"))
				}
			} else {
				r.want(t, tc.wantStatus)
			}
			for _, h := range []string{"X-Request-Id", "X-API-Version", "X-RateLimit-Limit", "X-RateLimit-Remaining",
				"X-RateLimit-Reset", "X-RateLimit-Limit-Minute", "X-RateLimit-Remaining-Minute", "X-RateLimit-Limit-Day",
				"X-RateLimit-Remaining-Day", "RateLimit-Policy", "RateLimit"} {
				if r.Header.Get(h) == "" {
					t.Errorf("header %s missing", h)
				}
			}
			if got := r.Header.Get("X-API-Version"); got != "1.0.0" {
				t.Errorf("X-API-Version = %q", got)
			}
		})
	}
	t.Run("405 names the allowed methods", func(t *testing.T) {
		r := a.do(req{method: "POST", path: petPath, key: a.staff, body: `{}`}).want(t, 405, "method_not_allowed")
		if got := r.Header.Get("Allow"); got != "DELETE, GET, HEAD, PUT" {
			t.Errorf("Allow = %q", got)
		}
	})
	t.Run("422 details name the field", func(t *testing.T) {
		p := a.do(req{method: "POST", path: "/api/pets", key: a.staff, body: `{"categoryId":1}`}).want(t, 422, "validation_failed").problem(t)
		if len(p.Details) != 1 || p.Details[0].Field != "name" {
			t.Errorf("details = %+v, want one for name", p.Details)
		}
	})
	t.Run("Bearer works like X-API-Key", func(t *testing.T) {
		a.do(req{method: "GET", path: "/api/pets", header: map[string]string{"Authorization": "Bearer " + a.customer}}).want(t, 200)
	})
	t.Run("revoked key is 401", func(t *testing.T) {
		plain, k := a.issueKey("gone", db.RoleCustomer, db.PlanFree, 0, 0)
		a.do(req{method: "GET", path: "/api/pets", key: plain}).want(t, 200)
		a.do(req{method: "DELETE", path: "/api/keys/" + itoa(k.ID), key: a.staff}).want(t, 204)
		a.do(req{method: "GET", path: "/api/pets", key: plain}).want(t, 401, "unauthorized")
	})
	t.Run("request id is echoed when sane", func(t *testing.T) {
		r := a.do(req{method: "GET", path: "/api/pets", key: a.staff, header: map[string]string{"X-Request-Id": "abc-123"}})
		if got := r.Header.Get("X-Request-Id"); got != "abc-123" {
			t.Errorf("X-Request-Id = %q", got)
		}
		r = a.do(req{method: "GET", path: "/api/pets", key: a.staff, header: map[string]string{"X-Request-Id": "<script>"}})
		if got := r.Header.Get("X-Request-Id"); got == "<script>" || got == "" {
			t.Errorf("X-Request-Id = %q, want a fresh id", got)
		}
	})
	t.Run("anonymous may read the document", func(t *testing.T) {
		a.do(req{method: "GET", path: "/api/openapi.json"}).want(t, 200)
		r := a.do(req{method: "GET", path: "/api/docs"}).want(t, 200)
		if !strings.Contains(string(r.Body), `id="swagger-ui"`) {
			t.Errorf("docs page lacks the Swagger UI mount: %s", r.Body)
		}
	})
}

// TestPanicIsInternal shows a panic becomes 500 internal without internals.
func TestPanicIsInternal(t *testing.T) {
	a := newTestApp(t)
	a.skipContract = true
	a.app = web.NewApp(web.AppOptions{Logger: a.handler.Logger})
	a.app.Get("/boom", func(c *fiber.Ctx) error { panic("secret: database password is hunter2") })
	a.handler.Routes(a.app)
	r := a.do(req{method: "GET", path: "/boom", header: map[string]string{"Accept": "application/json"}}).want(t, 500, "internal")
	if strings.Contains(string(r.Body), "hunter2") {
		t.Fatalf("internals leaked: %s", r.Body)
	}
}

// TestDeprecation covers SPEC §7 for GET /pets/{petId}.
func TestDeprecation(t *testing.T) {
	a := newTestApp(t)
	pet := a.seedPet("Rex", 1)
	cfg := a.handler.Config
	wantDeprecation := "@" + strconv.FormatInt(cfg.Deprecated.Unix(), 10)
	wantSunset := cfg.Sunset.Format("Mon, 02 Jan 2006 15:04:05 GMT")
	for _, path := range []string{"/api/pets/" + itoa(pet.ID), "/api/pets/999999"} {
		r := a.do(req{method: "GET", path: path, key: a.customer})
		if got := r.Header.Get("Deprecation"); got != wantDeprecation {
			t.Errorf("%s Deprecation = %q, want %q", path, got, wantDeprecation)
		}
		if got := r.Header.Get("Sunset"); got != wantSunset {
			t.Errorf("%s Sunset = %q, want %q", path, got, wantSunset)
		}
		id := strings.TrimPrefix(path, "/api/pets/")
		if got := r.Header.Get("Link"); got != `</api/pets?ids=`+id+`>; rel="successor-version"` {
			t.Errorf("%s Link = %q", path, got)
		}
	}
	r := a.do(req{method: "GET", path: "/api/pets/" + itoa(pet.ID)}).want(t, 401, "unauthorized")
	if r.Header.Get("Deprecation") == "" || r.Header.Get("Sunset") == "" {
		t.Errorf("a 401 of the deprecated operation lacks its headers: %v", r.Header)
	}
	a.clock.Set(cfg.Sunset.Add(-time.Second))
	a.do(req{method: "GET", path: "/api/pets/" + itoa(pet.ID), key: a.customer}).want(t, 200)
	a.clock.Set(cfg.Sunset)
	a.do(req{method: "GET", path: "/api/pets/" + itoa(pet.ID), key: a.customer}).want(t, 410, "endpoint_sunset")
}

// TestStability covers the X-API-Stability markers.
func TestStability(t *testing.T) {
	a := newTestApp(t)
	pet := a.seedPet("Rex", 1)
	r := a.do(req{method: "PUT", path: "/api/store/inventory/" + itoa(pet.ID), key: a.staff, body: map[string]any{"quantity": 4}}).want(t, 200)
	if got := r.Header.Get("X-API-Stability"); got != "beta" {
		t.Errorf("X-API-Stability = %q, want beta", got)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestOversizeBody announces a body past Fiber's own limit over a real
// connection: the 413 still carries the Error object and every API header.
// (The body is never sent: the server answers from the Content-Length.)
func TestOversizeBody(t *testing.T) {
	a := newTestApp(t)
	base := a.listen()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/categories HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-API-Key: %s\r\nContent-Length: %d\r\n\r\n{", a.staff, 2<<20)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	r := &response{Status: res.StatusCode, Header: res.Header, Body: out}
	r.want(t, 413, "payload_too_large")
	for _, h := range []string{"X-Request-Id", "X-API-Version", "X-RateLimit-Limit", "RateLimit", "RateLimit-Policy"} {
		if r.Header.Get(h) == "" {
			t.Errorf("header %s missing on the 413", h)
		}
	}
}

// TestHead answers HEAD like GET, without a body.
func TestHead(t *testing.T) {
	a := newTestApp(t)
	r := a.do(req{method: "HEAD", path: "/api/pets", key: a.customer}).want(t, 200)
	if len(r.Body) != 0 || r.Header.Get("X-RateLimit-Limit") == "" {
		t.Errorf("HEAD = %q, headers %v", r.Body, r.Header)
	}
}
