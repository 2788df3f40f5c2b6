package api_test

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
	"petstore/handlers/handlerstest"
)

// wantReplay fails unless r replays first: the same status and body, marked
// Idempotent-Replayed: true.
func wantReplay(t *testing.T, first, r *handlerstest.Response) {
	t.Helper()
	if r.Status >= 400 {
		// An Error names the request answering it, as X-Request-Id does.
		got, want := r.Problem(t), first.Problem(t)
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
func wantFresh(t *testing.T, r *handlerstest.Response) {
	t.Helper()
	if got := r.Header.Get("Idempotent-Replayed"); got != "" {
		t.Fatalf("Idempotent-Replayed = %q on a first answer", got)
	}
}

// TestIdempotencyOrders covers Idempotency-Key on POST /store/orders on
// both databases (SPEC §5).
func TestIdempotencyOrders(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		t0 := a.Clock.Now()
		pet := a.SeedPet("Rex", 5).ID
		one := `{"petId":` + handlerstest.Itoa(pet) + `,"quantity":1}`
		two := `{"petId":` + handlerstest.Itoa(pet) + `,"quantity":2}`
		const path = "/api/store/orders"

		first := a.Post(path, a.Customer, "k1", one).Want(t, 201)
		wantFresh(t, first)
		t.Run("same key and body replay", func(t *testing.T) {
			for range 2 {
				wantReplay(t, first, a.Post(path, a.Customer, "k1", one))
			}
			a.WantStock(t, pet, 4, "available")
			if got := a.OrderIDs(t, a.Customer, path); len(got) != 1 {
				t.Errorf("orders = %v, want one", got)
			}
		})
		t.Run("a different body is refused", func(t *testing.T) {
			r := a.Post(path, a.Customer, "k1", two).Want(t, 422, "idempotency_key_reused")
			wantFresh(t, r)
			a.Post(path, a.Customer, "k1", `{"quantity":1,"petId":`+handlerstest.Itoa(pet)+`}`).Want(t, 422, "idempotency_key_reused")
			a.WantStock(t, pet, 4, "available")
		})
		t.Run("keys are per API key", func(t *testing.T) {
			r := a.Post(path, a.Other, "k1", one).Want(t, 201)
			wantFresh(t, r)
			if string(r.Body) == string(first.Body) {
				t.Errorf("another API key got the first key's order: %s", r.Body)
			}
			a.WantStock(t, pet, 3, "available")
		})
		t.Run("in progress", func(t *testing.T) {
			sum := sha256.Sum256([]byte("POST " + path + "\n" + two))
			stored, err := a.Store.BeginIdempotent(context.Background(), "key:"+handlerstest.Itoa(a.CustID), "k2", hex.EncodeToString(sum[:]))
			if err != nil || stored != nil {
				t.Fatalf("claim k2 = %v, %v; want a fresh claim", stored, err)
			}
			a.Post(path, a.Customer, "k2", two).Want(t, 409, "idempotency_in_progress")
			a.Post(path, a.Customer, "k2", one).Want(t, 422, "idempotency_key_reused")
			a.Post(path, a.Other, "k2", two).Want(t, 201) // the claim is the customer's alone
			a.WantStock(t, pet, 1, "available")
			a.Clock.Add(59 * time.Second)
			a.Post(path, a.Customer, "k2", two).Want(t, 409, "idempotency_in_progress")
			a.WantStock(t, pet, 1, "available")
			// A claim held a minute is abandoned: its holder died. Taking it
			// over runs the request, which now lacks stock.
			a.Clock.Add(time.Second)
			taken := a.Post(path, a.Customer, "k2", two).Want(t, 409, "insufficient_stock")
			wantFresh(t, taken)
			a.Do(handlerstest.Req{Method: "PUT", Path: "/api/store/inventory/" + handlerstest.Itoa(pet), Key: a.Staff, Body: map[string]any{"quantity": 10}}).Want(t, 200)
			wantReplay(t, taken, a.Post(path, a.Customer, "k2", two)) // errors are answers too
			a.WantStock(t, pet, 10, "available")
		})
		t.Run("after 24 hours the key is new", func(t *testing.T) {
			a.Clock.Set(t0.Add(24*time.Hour - time.Second))
			wantReplay(t, first, a.Post(path, a.Customer, "k1", one))
			a.WantStock(t, pet, 10, "available")
			a.Clock.Set(t0.Add(24 * time.Hour))
			r := a.Post(path, a.Customer, "k1", two).Want(t, 201)
			wantFresh(t, r)
			a.WantStock(t, pet, 8, "available")
			wantReplay(t, r, a.Post(path, a.Customer, "k1", two))
		})
		t.Run("key too long", func(t *testing.T) {
			a.Post(path, a.Customer, strings.Repeat("k", 256), one).Want(t, 400, "bad_request")
			a.WantStock(t, pet, 8, "available")
		})
	})
}

// TestIdempotencyCatalog covers Idempotency-Key on POST /pets and POST
// /categories: a replay is the stored 201, not a second resource or a 409.
func TestIdempotencyCatalog(t *testing.T) {
	a := handlerstest.New(t)
	staff2, _ := a.IssueKey("staff 2", db.RoleStaff, db.PlanEnterprise, 1000, 10000)

	cat := a.Post("/api/categories", a.Staff, "c1", `{"name":"Dogs"}`).Want(t, 201)
	wantFresh(t, cat)
	wantReplay(t, cat, a.Post("/api/categories", a.Staff, "c1", `{"name":"Dogs"}`))
	a.Post("/api/categories", a.Staff, "c1", `{"name":"Cats"}`).Want(t, 422, "idempotency_key_reused")
	a.Post("/api/categories", staff2, "c1", `{"name":"Dogs"}`).Want(t, 409, "category_exists") // runs for another key
	var c db.Category
	cat.Decode(t, &c)
	var cats []db.Category
	a.GetJSON(t, a.Customer, "/api/categories", &cats)
	if diff := cmp.Diff([]db.Category{c}, cats); diff != "" {
		t.Errorf("categories (-want +got):\n%s", diff)
	}

	body := `{"name":"Rex","categoryId":` + handlerstest.Itoa(c.ID) + `}`
	pet := a.Post("/api/pets", a.Staff, "p1", body).Want(t, 201)
	wantFresh(t, pet)
	wantReplay(t, pet, a.Post("/api/pets", a.Staff, "p1", body))
	a.Post("/api/pets", a.Staff, "p1", `{"name":"Tom","categoryId":`+handlerstest.Itoa(c.ID)+`}`).Want(t, 422, "idempotency_key_reused")
	if got := a.PetNames(t, "/api/pets"); !cmp.Equal(got, []string{"Rex"}) {
		t.Errorf("pets = %v, want one Rex", got)
	}
	wantFresh(t, a.Post("/api/pets", staff2, "p1", body).Want(t, 201))
	if got := a.PetNames(t, "/api/pets"); !cmp.Equal(got, []string{"Rex", "Rex"}) {
		t.Errorf("pets = %v, want a second Rex from the second key", got)
	}
	// A customer's refused POST /pets is not stored under its key.
	a.Post("/api/pets", a.Customer, "p2", body).Want(t, 403, "forbidden")
	a.Post("/api/pets", a.Customer, "p2", body).Want(t, 403, "forbidden")
	// Without the header every POST runs.
	a.Do(handlerstest.Req{Method: "POST", Path: "/api/categories", Key: a.Staff, Body: `{"name":"Dogs"}`}).Want(t, 409, "category_exists")
}
