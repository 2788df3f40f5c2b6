package handlers_test

import (
	"strings"
	"testing"

	"petstore/db"
	"petstore/handlers/handlerstest"
)

// TestOperations covers /healthz, /readyz and /metrics (SPEC §11).
func TestOperations(t *testing.T) {
	a := handlerstest.New(t)
	a.Do(handlerstest.Req{Method: "GET", Path: "/healthz"}).Want(t, 200)
	r := a.Do(handlerstest.Req{Method: "GET", Path: "/readyz"}).Want(t, 200)
	var ready map[string]string
	r.Decode(t, &ready)
	if ready["database"] != "up" || ready["redis"] != "not configured" {
		t.Errorf("readyz = %v", ready)
	}

	pet := a.SeedPet("Rex", 5)
	a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets/" + handlerstest.Itoa(pet.ID), Key: a.Customer}).Want(t, 200)
	a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets/" + handlerstest.Itoa(pet.ID+1000), Key: a.Customer}).Want(t, 404)
	a.Do(handlerstest.Req{Method: "POST", Path: "/api/store/orders", Key: a.Customer, Body: map[string]any{"petId": pet.ID, "quantity": 1}}).Want(t, 201)
	a.Do(handlerstest.Req{Method: "GET", Path: "/api/no/such/route/" + strings.Repeat("x", 10), Key: a.Customer}).Want(t, 404)

	body := string(a.Do(handlerstest.Req{Method: "GET", Path: "/metrics"}).Want(t, 200).Body)
	for _, want := range []string{
		`petstore_http_requests_total{method="GET",route="/api/pets/:petId",status="200"} 1`,
		`petstore_http_requests_total{method="GET",route="/api/pets/:petId",status="404"} 1`,
		`petstore_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`petstore_http_requests_total{method="POST",route="/api/store/orders",status="201"} 1`,
		`petstore_http_request_duration_seconds_bucket{method="POST",route="/api/store/orders"`,
		`petstore_ratelimit_decisions_total{outcome="allowed"} 4`,
		`petstore_orders_placed_total 1`,
		// A lone order at rest is placed at once, in a batch of its own.
		`petstore_order_batches_total 1`,
		`petstore_order_batched_total 1`,
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
	a := handlerstest.New(t)
	key, _ := a.IssueKey("tight", db.RoleCustomer, db.PlanEnterprise, 1, 1000)
	a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: key}).Want(t, 200)
	a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets", Key: key}).Want(t, 429, "rate_limited")
	a.Do(handlerstest.Req{Method: "GET", Path: "/api/pets/1", Key: key}).Want(t, 429, "rate_limited")
	body := string(a.Do(handlerstest.Req{Method: "GET", Path: "/metrics"}).Want(t, 200).Body)
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
