package handlers_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"petstore/db"
	"petstore/db/dbtest"
)

// post sends a POST with an Idempotency-Key.
func (a *testApp) post(path, key, idemKey, body string) *response {
	a.t.Helper()
	return a.do(req{method: "POST", path: path, key: key, body: body, header: map[string]string{"Idempotency-Key": idemKey}})
}

// wantReplay fails unless r replays first: the same status and body, marked
// Idempotent-Replayed: true.
func wantReplay(t *testing.T, first, r *response) {
	t.Helper()
	if r.Status >= 400 {
		// An Error names the request answering it, as X-Request-Id does.
		got, want := r.problem(t), first.problem(t)
		if got.RequestID != r.Header.Get("X-Request-Id") {
			t.Errorf("replayed requestId = %q, want this request's %q", got.RequestID, r.Header.Get("X-Request-Id"))
		}
		got.RequestID, want.RequestID = "", ""
		if r.Status != first.Status || !cmp.Equal(got, want) {
			t.Fatalf("replay = %d %+v, want %d %+v", r.Status, got, first.Status, want)
		}
	} else if r.Status != first.Status || string(r.Body) != string(first.Body) {
		t.Fatalf("replay = %d %s, want %d %s", r.Status, r.Body, first.Status, first.Body)
	}
	if got, want := r.Header.Get("Location"), first.Header.Get("Location"); got != want {
		t.Errorf("replayed Location = %q, want %q", got, want)
	}
	if got := r.Header.Get("Idempotent-Replayed"); got != "true" {
		t.Fatalf("Idempotent-Replayed = %q, want true", got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", got)
	}
	if r.Header.Get("X-RateLimit-Limit") == "" || r.Header.Get("X-Request-Id") == "" {
		t.Errorf("replay lacks the API headers: %v", r.Header)
	}
}

// wantFresh fails unless r is not a replay.
func wantFresh(t *testing.T, r *response) {
	t.Helper()
	if got := r.Header.Get("Idempotent-Replayed"); got != "" {
		t.Fatalf("Idempotent-Replayed = %q on a first answer", got)
	}
}

// TestIdempotencyOrders covers Idempotency-Key on POST /store/orders on
// both databases (SPEC §5).
func TestIdempotencyOrders(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := newTestAppOn(t, open)
		t0 := a.clock.Now()
		pet := a.seedPet("Rex", 5).ID
		one := `{"petId":` + itoa(pet) + `,"quantity":1}`
		two := `{"petId":` + itoa(pet) + `,"quantity":2}`
		const path = "/api/store/orders"

		first := a.post(path, a.customer, "k1", one).want(t, 201)
		wantFresh(t, first)
		t.Run("same key and body replay", func(t *testing.T) {
			for range 2 {
				wantReplay(t, first, a.post(path, a.customer, "k1", one))
			}
			a.wantStock(t, pet, 4, "available")
			if got := a.orderIDs(t, a.customer, path); len(got) != 1 {
				t.Errorf("orders = %v, want one", got)
			}
		})
		t.Run("a different body is refused", func(t *testing.T) {
			r := a.post(path, a.customer, "k1", two).want(t, 422, "idempotency_key_reused")
			wantFresh(t, r)
			a.post(path, a.customer, "k1", `{"quantity":1,"petId":`+itoa(pet)+`}`).want(t, 422, "idempotency_key_reused")
			a.wantStock(t, pet, 4, "available")
		})
		t.Run("keys are per API key", func(t *testing.T) {
			r := a.post(path, a.other, "k1", one).want(t, 201)
			wantFresh(t, r)
			if string(r.Body) == string(first.Body) {
				t.Errorf("another API key got the first key's order: %s", r.Body)
			}
			a.wantStock(t, pet, 3, "available")
		})
		t.Run("in progress", func(t *testing.T) {
			sum := sha256.Sum256([]byte("POST " + path + "\n" + two))
			stored, err := a.store.BeginIdempotent(context.Background(), "key:"+itoa(a.custID), "k2", hex.EncodeToString(sum[:]))
			if err != nil || stored != nil {
				t.Fatalf("claim k2 = %v, %v; want a fresh claim", stored, err)
			}
			a.post(path, a.customer, "k2", two).want(t, 409, "idempotency_in_progress")
			a.post(path, a.customer, "k2", one).want(t, 422, "idempotency_key_reused")
			a.post(path, a.other, "k2", two).want(t, 201) // the claim is the customer's alone
			a.wantStock(t, pet, 1, "available")
			a.clock.Add(59 * time.Second)
			a.post(path, a.customer, "k2", two).want(t, 409, "idempotency_in_progress")
			a.wantStock(t, pet, 1, "available")
			// A claim held a minute is abandoned: its holder died. Taking it
			// over runs the request, which now lacks stock.
			a.clock.Add(time.Second)
			taken := a.post(path, a.customer, "k2", two).want(t, 409, "insufficient_stock")
			wantFresh(t, taken)
			a.do(req{method: "PUT", path: "/api/store/inventory/" + itoa(pet), key: a.staff, body: map[string]any{"quantity": 10}}).want(t, 200)
			wantReplay(t, taken, a.post(path, a.customer, "k2", two)) // errors are answers too
			a.wantStock(t, pet, 10, "available")
		})
		t.Run("after 24 hours the key is new", func(t *testing.T) {
			a.clock.Set(t0.Add(24*time.Hour - time.Second))
			wantReplay(t, first, a.post(path, a.customer, "k1", one))
			a.wantStock(t, pet, 10, "available")
			a.clock.Set(t0.Add(24 * time.Hour))
			r := a.post(path, a.customer, "k1", two).want(t, 201)
			wantFresh(t, r)
			a.wantStock(t, pet, 8, "available")
			wantReplay(t, r, a.post(path, a.customer, "k1", two))
		})
		t.Run("key too long", func(t *testing.T) {
			a.post(path, a.customer, strings.Repeat("k", 256), one).want(t, 400, "bad_request")
			a.wantStock(t, pet, 8, "available")
		})
	})
}

// TestIdempotencyCatalog covers Idempotency-Key on POST /pets and POST
// /categories: a replay is the stored 201, not a second resource or a 409.
func TestIdempotencyCatalog(t *testing.T) {
	a := newTestApp(t)
	staff2, _ := a.issueKey("staff 2", db.RoleStaff, db.PlanEnterprise, 1000, 10000)

	cat := a.post("/api/categories", a.staff, "c1", `{"name":"Dogs"}`).want(t, 201)
	wantFresh(t, cat)
	wantReplay(t, cat, a.post("/api/categories", a.staff, "c1", `{"name":"Dogs"}`))
	a.post("/api/categories", a.staff, "c1", `{"name":"Cats"}`).want(t, 422, "idempotency_key_reused")
	a.post("/api/categories", staff2, "c1", `{"name":"Dogs"}`).want(t, 409, "category_exists") // runs for another key
	var c db.Category
	cat.decode(t, &c)
	var cats []db.Category
	a.getJSON(t, a.customer, "/api/categories", &cats)
	if diff := cmp.Diff([]db.Category{c}, cats); diff != "" {
		t.Errorf("categories (-want +got):\n%s", diff)
	}

	body := `{"name":"Rex","categoryId":` + itoa(c.ID) + `}`
	pet := a.post("/api/pets", a.staff, "p1", body).want(t, 201)
	wantFresh(t, pet)
	wantReplay(t, pet, a.post("/api/pets", a.staff, "p1", body))
	a.post("/api/pets", a.staff, "p1", `{"name":"Tom","categoryId":`+itoa(c.ID)+`}`).want(t, 422, "idempotency_key_reused")
	if got := a.petNames(t, "/api/pets"); !cmp.Equal(got, []string{"Rex"}) {
		t.Errorf("pets = %v, want one Rex", got)
	}
	wantFresh(t, a.post("/api/pets", staff2, "p1", body).want(t, 201))
	if got := a.petNames(t, "/api/pets"); !cmp.Equal(got, []string{"Rex", "Rex"}) {
		t.Errorf("pets = %v, want a second Rex from the second key", got)
	}
	// A customer's refused POST /pets is not stored under its key.
	a.post("/api/pets", a.customer, "p2", body).want(t, 403, "forbidden")
	a.post("/api/pets", a.customer, "p2", body).want(t, 403, "forbidden")
	// Without the header every POST runs.
	a.do(req{method: "POST", path: "/api/categories", key: a.staff, body: `{"name":"Dogs"}`}).want(t, 409, "category_exists")
}
