package handlers_test

import (
	"strings"
	"testing"

	"petstore/db"
)

// TestOperations covers /healthz, /readyz and /metrics (SPEC §11).
func TestOperations(t *testing.T) {
	a := newTestApp(t)
	a.do(req{method: "GET", path: "/healthz"}).want(t, 200)
	r := a.do(req{method: "GET", path: "/readyz"}).want(t, 200)
	var ready map[string]string
	r.decode(t, &ready)
	if ready["database"] != "up" || ready["redis"] != "not configured" {
		t.Errorf("readyz = %v", ready)
	}

	pet := a.seedPet("Rex", 5)
	a.do(req{method: "GET", path: "/api/pets/" + itoa(pet.ID), key: a.customer}).want(t, 200)
	a.do(req{method: "GET", path: "/api/pets/" + itoa(pet.ID+1000), key: a.customer}).want(t, 404)
	a.do(req{method: "POST", path: "/api/store/orders", key: a.customer, body: map[string]any{"petId": pet.ID, "quantity": 1}}).want(t, 201)
	a.do(req{method: "GET", path: "/api/no/such/route/" + strings.Repeat("x", 10), key: a.customer}).want(t, 404)

	body := string(a.do(req{method: "GET", path: "/metrics"}).want(t, 200).Body)
	for _, want := range []string{
		`petstore_http_requests_total{method="GET",route="/api/pets/:petId",status="200"} 1`,
		`petstore_http_requests_total{method="GET",route="/api/pets/:petId",status="404"} 1`,
		`petstore_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`petstore_http_requests_total{method="POST",route="/api/store/orders",status="201"} 1`,
		`petstore_http_request_duration_seconds_bucket{method="POST",route="/api/store/orders"`,
		`petstore_ratelimit_decisions_total{outcome="allowed"} 4`,
		`petstore_orders_placed_total 1`,
		`go_sql_max_open_connections{db_name="petstore"}`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestRefusalRouteLabel shows a refusal by the API's limiter, which
// answers before any route took the request, is measured under the route
// it was for, not as "unmatched".
func TestRefusalRouteLabel(t *testing.T) {
	a := newTestApp(t)
	key, _ := a.issueKey("tight", db.RoleCustomer, db.PlanEnterprise, 1, 1000)
	a.do(req{method: "GET", path: "/api/pets", key: key}).want(t, 200)
	a.do(req{method: "GET", path: "/api/pets", key: key}).want(t, 429, "rate_limited")
	a.do(req{method: "GET", path: "/api/pets/1", key: key}).want(t, 429, "rate_limited")
	body := string(a.do(req{method: "GET", path: "/metrics"}).want(t, 200).Body)
	for _, want := range []string{
		`petstore_http_requests_total{method="GET",route="/api/pets",status="429"} 1`,
		`petstore_http_requests_total{method="GET",route="/api/pets/:petId",status="429"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(body, `route="unmatched",status="429"`) {
		t.Errorf("a 429 is labelled unmatched:\n%s", body)
	}
}
