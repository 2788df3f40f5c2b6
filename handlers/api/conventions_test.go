package api_test

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

	"petstore/db"
	"petstore/handlers/handlerstest"
)

// TestAPIConventions covers SPEC §2: the Error object on every error path
// and the headers on every answer.
func TestAPIConventions(t *testing.T) {
	a := handlerstest.New(t)
	pet := a.SeedPet("Rex", 3)
	petPath := "/api/pets/" + handlerstest.Itoa(pet.ID)
	cases := []struct {
		name       string
		req        handlerstest.Req
		wantStatus int
		wantCode   string
	}{
		{"unknown route without key", handlerstest.Req{Method: "GET", Path: "/api/nope"}, 404, "not_found"},
		{"unknown route with key", handlerstest.Req{Method: "GET", Path: "/api/nope", Key: a.Staff}, 404, "not_found"},
		{"wrong method", handlerstest.Req{Method: "PATCH", Path: "/api/pets", Key: a.Staff}, 405, "method_not_allowed"},
		{"no key", handlerstest.Req{Method: "GET", Path: "/api/pets"}, 401, "unauthorized"},
		{"unknown key", handlerstest.Req{Method: "GET", Path: "/api/pets", Key: "psk_nope"}, 401, "unauthorized"},
		{"customer on staff op", handlerstest.Req{Method: "POST", Path: "/api/categories", Key: a.Customer, Body: map[string]any{"name": "x"}}, 403, "forbidden"},
		{"malformed JSON", handlerstest.Req{Method: "POST", Path: "/api/categories", Key: a.Staff, Body: `{"name":`}, 400, "bad_request"},
		{"unknown field", handlerstest.Req{Method: "POST", Path: "/api/categories", Key: a.Staff, Body: `{"name":"x","colour":"red"}`}, 400, "bad_request"},
		{"wrong type", handlerstest.Req{Method: "POST", Path: "/api/categories", Key: a.Staff, Body: `{"name":42}`}, 400, "bad_request"},
		{"trailing data", handlerstest.Req{Method: "POST", Path: "/api/categories", Key: a.Staff, Body: `{"name":"x"} {}`}, 400, "bad_request"},
		{"not an object", handlerstest.Req{Method: "POST", Path: "/api/categories", Key: a.Staff, Body: `[1,2]`}, 400, "bad_request"},
		{"empty body", handlerstest.Req{Method: "POST", Path: "/api/categories", Key: a.Staff, Body: ``, ContentType: "application/json", Header: map[string]string{"Content-Type": "application/json"}}, 400, "bad_request"},
		{"invalid UTF-8", handlerstest.Req{Method: "POST", Path: "/api/categories", Key: a.Staff, Body: []byte("{\"name\":\"\xff\xfe\"}")}, 400, "bad_request"},
		{"bad path id", handlerstest.Req{Method: "GET", Path: "/api/categories/abc", Key: a.Staff}, 400, "bad_request"},
		{"negative path id", handlerstest.Req{Method: "GET", Path: "/api/categories/-1", Key: a.Staff}, 400, "bad_request"},
		{"overflowing path id", handlerstest.Req{Method: "GET", Path: "/api/categories/99999999999999999999", Key: a.Staff}, 400, "bad_request"},
		{"bad cursor", handlerstest.Req{Method: "GET", Path: "/api/pets?cursor=zzz", Key: a.Staff}, 400, "bad_request"},
		{"limit too big", handlerstest.Req{Method: "GET", Path: "/api/pets?limit=101", Key: a.Staff}, 400, "bad_request"},
		{"limit zero", handlerstest.Req{Method: "GET", Path: "/api/pets?limit=0", Key: a.Staff}, 400, "bad_request"},
		{"unknown status", handlerstest.Req{Method: "GET", Path: "/api/pets?status=lost", Key: a.Staff}, 400, "bad_request"},
		{"wrong media type", handlerstest.Req{Method: "POST", Path: "/api/categories", Key: a.Staff, Body: "name=x", ContentType: "application/x-www-form-urlencoded"}, 415, "unsupported_media_type"},
		{"too large", handlerstest.Req{Method: "POST", Path: "/api/categories", Key: a.Staff, Body: `{"name":"` + strings.Repeat("x", 70<<10) + `"}`}, 413, "payload_too_large"},
		{"invalid value", handlerstest.Req{Method: "POST", Path: "/api/categories", Key: a.Staff, Body: `{"name":"   "}`}, 422, "validation_failed"},
		{"missing pet", handlerstest.Req{Method: "GET", Path: "/api/store/inventory/999999", Key: a.Staff}, 404, "not_found"},
		{"deprecated op", handlerstest.Req{Method: "GET", Path: petPath, Key: a.Customer}, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := a.Do(tc.req)
			if tc.wantCode != "" {
				r.Want(t, tc.wantStatus, tc.wantCode)
				p := r.Problem(t)
				if p.Message == "" || p.RequestID != r.Header.Get("X-Request-Id") {
					t.Errorf("problem = %+v; want a message and requestId = X-Request-Id %q", p, r.Header.Get("X-Request-Id"))
				}
			} else {
				r.Want(t, tc.wantStatus)
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
		r := a.Do(handlerstest.Req{Method: "POST", Path: petPath, Key: a.Staff, Body: `{}`}).Want(t, 405, "method_not_allowed")
		if got := r.Header.Get("Allow"); got != "DELETE, GET, HEAD, PUT" {
			t.Errorf("Allow = %q", got)
		}
	})
	t.Run("422 details name the field", func(t *testing.T) {
		p := a.Do(handlerstest.Req{Method: "POST", Path: "/api/pets", Key: a.Staff, Body: `{"categoryId":1}`}).Want(t, 422, "validation_failed").Problem(t)
		if len(p.Details) != 1 || p.Details[0].Field != "name" {
			t.Errorf("details = %+v, want one for name", p.Details)
		}
	})
	t.Run("Bearer works like X-API-Key", func(t *testing.T) {
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Header: map[string]string{"Authorization": "Bearer " + a.Customer}}).Want(t, 200)
	})
	t.Run("revoked key is 401", func(t *testing.T) {
		plain, k := a.IssueKey("gone", db.RoleCustomer, db.PlanFree, 0, 0)
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: plain}).Want(t, 200)
		a.Do(handlerstest.Req{Method: "DELETE", Path: "/api/keys/" + handlerstest.Itoa(k.ID), Key: a.Staff}).Want(t, 204)
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: plain}).Want(t, 401, "unauthorized")
	})
	t.Run("request id is the server's own unless a trusted proxy sent it", func(t *testing.T) {
		r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: a.Staff, Header: map[string]string{"X-Request-Id": "abc-123"}})
		if got := r.Header.Get("X-Request-Id"); got == "abc-123" || got == "" {
			t.Errorf("X-Request-Id = %q from a client, want the server's own", got)
		}
		proxied := handlerstest.New(t, handlerstest.WithProxies(t, "0.0.0.0")) // app.Test's peer
		r = proxied.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: proxied.Staff, Header: map[string]string{"X-Request-Id": "abc-123"}})
		if got := r.Header.Get("X-Request-Id"); got != "abc-123" {
			t.Errorf("X-Request-Id = %q from a trusted proxy, want abc-123", got)
		}
		r = proxied.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: proxied.Staff, Header: map[string]string{"X-Request-Id": "<script>"}})
		if got := r.Header.Get("X-Request-Id"); got == "<script>" || got == "" {
			t.Errorf("X-Request-Id = %q, want a fresh id", got)
		}
	})
	t.Run("anonymous may read the document", func(t *testing.T) {
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/openapi.json"}).Want(t, 200)
		r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/docs"}).Want(t, 200)
		if !strings.Contains(string(r.Body), `id="swagger-ui"`) {
			t.Errorf("docs page lacks the Swagger UI mount: %s", r.Body)
		}
	})
}

// TestDeprecation covers SPEC §7 for GET /pets/{petId}.
func TestDeprecation(t *testing.T) {
	a := handlerstest.New(t)
	pet := a.SeedPet("Rex", 1)
	cfg := a.Handler.Config
	wantDeprecation := "@" + strconv.FormatInt(cfg.Deprecated.Unix(), 10)
	wantSunset := cfg.Sunset.Format("Mon, 02 Jan 2006 15:04:05 GMT")
	for _, path := range []string{"/api/pets/" + handlerstest.Itoa(pet.ID), "/api/pets/999999"} {
		r := a.Do(handlerstest.Req{Method: "GET", Path: path, Key: a.Customer})
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
	// Every variant Fiber routes to the operation carries the headers too
	// (SPEC §17): its letter case, a trailing slash, HEAD.
	for _, v := range []handlerstest.Req{
		{Method: "GET", Path: "/API/PETS/" + handlerstest.Itoa(pet.ID), Key: a.Customer},
		{Method: "GET", Path: "/Api/Pets/" + handlerstest.Itoa(pet.ID) + "/", Key: a.Customer},
		{Method: "HEAD", Path: "/api/pets/" + handlerstest.Itoa(pet.ID), Key: a.Customer},
	} {
		r := a.Do(v).Want(t, 200)
		if r.Header.Get("Deprecation") != wantDeprecation || r.Header.Get("Sunset") != wantSunset ||
			r.Header.Get("Link") != `</api/pets?ids=`+handlerstest.Itoa(pet.ID)+`>; rel="successor-version"` {
			t.Errorf("%s %s lacks the deprecation headers: %v", v.Method, v.Path, r.Header)
		}
	}
	r := a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets/" + handlerstest.Itoa(pet.ID)}).Want(t, 401, "unauthorized")
	if r.Header.Get("Deprecation") == "" || r.Header.Get("Sunset") == "" {
		t.Errorf("a 401 of the deprecated operation lacks its headers: %v", r.Header)
	}
	a.Clock.Set(cfg.Sunset.Add(-time.Second))
	a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets/" + handlerstest.Itoa(pet.ID), Key: a.Customer}).Want(t, 200)
	a.Clock.Set(cfg.Sunset)
	a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets/" + handlerstest.Itoa(pet.ID), Key: a.Customer}).Want(t, 410, "endpoint_sunset")
}

// TestStability covers the X-API-Stability markers.
func TestStability(t *testing.T) {
	a := handlerstest.New(t)
	pet := a.SeedPet("Rex", 1)
	r := a.Do(handlerstest.Req{Method: "PUT", Path: "/api/store/inventory/" + handlerstest.Itoa(pet.ID), Key: a.Staff, Body: map[string]any{"quantity": 4}}).Want(t, 200)
	if got := r.Header.Get("X-API-Stability"); got != "beta" {
		t.Errorf("X-API-Stability = %q, want beta", got)
	}
}

// TestOversizeBody announces a body past the 64 KiB limit over a real
// connection: the 413 comes after the key and the limit (web.ReadBody's
// place in the API's chain), so it carries the Error object and every API
// header, and the server answers without reading the body: 16 KiB of its
// 2 MiB are sent.
func TestOversizeBody(t *testing.T) {
	a := handlerstest.New(t)
	base := a.Listen()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/categories HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-API-Key: %s\r\nContent-Length: %d\r\n\r\n{%s", a.Staff, 2<<20, strings.Repeat(" ", 16<<10))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	r := &handlerstest.Response{Status: res.StatusCode, Header: res.Header, Body: out}
	r.Want(t, 413, "payload_too_large")
	for _, h := range []string{"X-Request-Id", "X-API-Version", "X-RateLimit-Limit", "RateLimit", "RateLimit-Policy"} {
		if r.Header.Get(h) == "" {
			t.Errorf("header %s missing on the 413", h)
		}
	}
}

// TestHead answers HEAD like GET, without a body.
func TestHead(t *testing.T) {
	a := handlerstest.New(t)
	r := a.Do(handlerstest.Req{Method: "HEAD", Path: "/api/pets", Key: a.Customer}).Want(t, 200)
	if len(r.Body) != 0 || r.Header.Get("X-RateLimit-Limit") == "" {
		t.Errorf("HEAD = %q, headers %v", r.Body, r.Header)
	}
}
