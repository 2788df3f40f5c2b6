package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// TestUnavailableSQLiteLocked: another process (the CLI, a backup) holds
// SQLite's write lock past busy_timeout. Writes answer 503 unavailable
// with Retry-After — the API with every rate-limit header, the console
// with its fragment — reads go on, and writes work again once the lock is
// released. (cmd/petstore's outage tests take PostgreSQL away.)
func TestUnavailableSQLiteLocked(t *testing.T) {
	t.Parallel() // most of it is SQLite's busy_timeout running out (5 s, twice)
	a := handlerstest.NewOn(t, dbtest.SQLite)
	pet := a.SeedPet("Rex", 5)
	b := a.SignedIn(t)
	ctx := context.Background()
	lock, err := a.Store.DB().BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()

	order := handlerstest.Req{Method: http.MethodPost, Path: "/api/store/orders", Key: a.Customer,
		Body: map[string]any{"petId": pet.ID, "quantity": 1}}
	r := a.Do(order).Want(t, http.StatusServiceUnavailable, "unavailable")
	if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After = %q", r.Header.Get("Retry-After"))
	}
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Limit-Minute",
		"X-RateLimit-Remaining-Minute", "X-RateLimit-Limit-Day", "X-RateLimit-Remaining-Day", "RateLimit", "RateLimit-Policy"} {
		if r.Header.Get(h) == "" {
			t.Errorf("the 503 lacks %s", h)
		}
	}
	if p := r.Problem(t); strings.Contains(p.Message, "locked") || strings.Contains(p.Message, "SQLITE") {
		t.Errorf("the message leaks the driver's words: %q", p.Message)
	}
	a.Do(handlerstest.Req{Method: http.MethodGet, Path: "/api/pets", Key: a.Customer}).Want(t, http.StatusOK)

	page := b.HXPost("/staff/inventory/"+strconv.FormatInt(pet.ID, 10), url.Values{"quantity": {"7"}})
	page.WantStatus(http.StatusServiceUnavailable)
	if page.ID("error").AttrOr("data-status", "") != "503" || strings.Contains(string(page.Body), "<html") {
		t.Errorf("the console's htmx answer is not the 503 fragment:\n%s", page.Body)
	}
	if page.Header.Get("Retry-After") == "" {
		t.Error("the console's 503 lacks Retry-After")
	}

	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	a.Do(order).Want(t, http.StatusCreated)
}
