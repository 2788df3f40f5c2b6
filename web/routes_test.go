package web

import (
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/go-cmp/cmp"

	"petstore/db"
)

// routesApp is a small API: its route table and its fallback for the
// paths no route takes.
func routesApp(t *testing.T) (*fiber.App, *Routes) {
	t.Helper()
	var table *Routes
	ok := func(c *fiber.Ctx) error {
		return c.SendString(c.Method() + " " + c.Route().Path + " streaming=" + strconv.FormatBool(IsStreaming(c)))
	}
	app := newTestApp(t, AppOptions{}, func(r *Routes) {
		table = r
		r.Add(route("GET", "/api/pets", ok))
		r.Add(route("POST", "/api/pets", ok))
		r.Add(route("GET", "/api/pets/:petId", ok))
		r.Add(route("PUT", "/api/pets/:petId", ok))
		r.Add(route("DELETE", "/api/pets/:petId", ok))
		r.Add(Route{Method: "GET", Path: "/api/events", Streaming: true, Handlers: []fiber.Handler{ok}})
		r.Fallback("/api", []fiber.Handler{r.MethodFallback("No such API route.")})
	})
	return app, table
}

// routed is what a test of routing checks of an answer.
type routed struct {
	Status int
	Body   string // a success's
	Code   string // an error's
	Allow  string
}

// TestRoutes: a route answers its paths as Fiber routes them (any letter
// case, a trailing slash), a GET answers HEAD too, and a streaming route
// is known as one (IsStreaming: never compressed, not load). A path the
// table has under other methods is 405 method_not_allowed with Allow
// listing them (HEAD beside GET), any other 404 not_found (SPEC §2).
func TestRoutes(t *testing.T) {
	app, _ := routesApp(t)
	for _, tc := range []struct {
		method, path string
		want         routed
	}{
		{"GET", "/api/pets", routed{Status: 200, Body: "GET /api/pets streaming=false"}},
		{"HEAD", "/api/pets", routed{Status: 200}},
		{"GET", "/API/Pets/7/", routed{Status: 200, Body: "GET /api/pets/:petId streaming=false"}},
		{"DELETE", "/api/pets/7", routed{Status: 200, Body: "DELETE /api/pets/:petId streaming=false"}},
		{"GET", "/api/events", routed{Status: 200, Body: "GET /api/events streaming=true"}},
		{"PATCH", "/api/pets", routed{Status: 405, Code: EMethodNotAllowed, Allow: "GET, HEAD, POST"}},
		{"POST", "/api/pets/7", routed{Status: 405, Code: EMethodNotAllowed, Allow: "DELETE, GET, HEAD, PUT"}},
		{"POST", "/Api/Pets/7/", routed{Status: 405, Code: EMethodNotAllowed, Allow: "DELETE, GET, HEAD, PUT"}},
		{"GET", "/api/nope", routed{Status: 404, Code: db.ENotFound}},
		{"GET", "/api/pets/7/photos", routed{Status: 404, Code: db.ENotFound}},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			a := send(t, app, httptest.NewRequest(tc.method, tc.path, nil))
			got := routed{Status: a.Status, Allow: a.Header.Get(fiber.HeaderAllow)}
			if a.Status < 400 {
				got.Body = string(a.Body)
			} else {
				got.Code = a.problem(t).Code
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
