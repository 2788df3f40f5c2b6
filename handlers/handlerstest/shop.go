package handlerstest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"petstore/db"
	"petstore/web/browser/browsertest"
)

// Shopper is a new storefront visitor: it loads the cart, a page with
// forms, for a cookie and the CSRF token (the catalog sets neither:
// browser.CSRF).
func (a *App) Shopper(t *testing.T) *Browser {
	t.Helper()
	s := a.Browser(t)
	s.Get("/cart").WantStatus(http.StatusOK)
	if s.CSRF == "" {
		t.Fatal("the cart carries no CSRF token")
	}
	return s
}

// ShopPetSpec is a pet to seed: its category, name and stock.
type ShopPetSpec struct {
	Cat, Name string
	Stock     int64
}

// ShopSeed is what seedShop made, by name.
type ShopSeed struct {
	Cats map[string]*db.Category
	Pets map[string]*db.Pet
}

// SeedShop creates the categories and pets through the store, in order.
func SeedShop(t *testing.T, a *App, specs ...ShopPetSpec) *ShopSeed {
	t.Helper()
	ctx := context.Background()
	s := &ShopSeed{Cats: map[string]*db.Category{}, Pets: map[string]*db.Pet{}}
	for _, spec := range specs {
		cat := s.Cats[spec.Cat]
		if cat == nil {
			c, err := a.Store.CreateCategory(ctx, db.NewCategory{Name: Ptr(spec.Cat)})
			if err != nil {
				t.Fatal(err)
			}
			cat, s.Cats[spec.Cat] = c, c
		}
		s.Pets[spec.Name] = s.AddPet(t, a, cat.ID, spec.Name, spec.Stock)
	}
	return s
}

// AddPet creates a pet with stock in the category catID.
func (s *ShopSeed) AddPet(t *testing.T, a *App, catID int64, name string, stock int64) *db.Pet {
	t.Helper()
	ctx := context.Background()
	p, err := a.Store.CreatePet(ctx, db.NewPet{Name: &name, CategoryID: &catID})
	if err != nil {
		t.Fatal(err)
	}
	if stock != 1 {
		if _, err := a.Store.SetInventory(ctx, p.ID, db.InventoryUpdate{Quantity: &stock}); err != nil {
			t.Fatal(err)
		}
	}
	p, err = a.Store.FindPetByID(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// SetStock changes a pet's stock behind the shopper's back.
func SetStock(t *testing.T, a *App, petID, stock int64) {
	t.Helper()
	if _, err := a.Store.SetInventory(context.Background(), petID, db.InventoryUpdate{Quantity: &stock}); err != nil {
		t.Fatal(err)
	}
}

// PetStock reads a pet's stock now.
func PetStock(t *testing.T, a *App, petID int64) int64 {
	t.Helper()
	p, err := a.Store.FindPetByID(context.Background(), petID)
	if err != nil {
		t.Fatal(err)
	}
	return p.Stock
}

// Buyer is a valid checkout form (SPEC §14's details: name, email and
// phone, no preferred date); pairs change or add fields.
func Buyer(kv ...string) url.Values {
	v := Form("name", "Ada Lovelace", "email", "ada@example.com", "phone", "+44 20 7946 0000")
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// Checkout places the cart with the details in form (Buyer() when nil),
// as htmx does with hx, and returns the order number the confirmation
// shows, failing the test unless the answer sends the shopper there (a
// 303 for a form, HX-Redirect for htmx).
func (b *Browser) Checkout(form url.Values, hx ...bool) int64 {
	b.T.Helper()
	if form == nil {
		form = Buyer()
	}
	var r *browsertest.Page
	if len(hx) > 0 && hx[0] {
		r = b.HXPost("/checkout", form)
	} else {
		r = b.Post("/checkout", form)
	}
	to := r.Header.Get("Location")
	if r.Header.Get("HX-Redirect") != "" && r.Status == http.StatusOK {
		to = r.Header.Get("HX-Redirect")
	} else if r.Status != http.StatusSeeOther {
		b.T.Fatalf("status = %d, want a 303 to the confirmation; body:\n%s", r.Status, r.Body)
	}
	m := confirmationPath.FindStringSubmatch(to)
	if m == nil {
		b.T.Fatalf("sent to %q, want /orders/confirmation/{number}", to)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		b.T.Fatal(err)
	}
	return n
}

// confirmationPath is where a checkout sends the shopper.
var confirmationPath = regexp.MustCompile(`^/orders/confirmation/([0-9]+)$`)

// Form builds url.Values from pairs.
func Form(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// PostAtOnce sends n copies of one form post through the app at the same
// moment (a script replaying a cookie) and counts the answers by status.
// setCookies adds the sender's cookies to each request.
func PostAtOnce(t *testing.T, a *App, n int, path, body string, setCookies func(*http.Request)) map[int]int {
	t.Helper()
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		setCookies(r)
		wg.Go(func() {
			<-start
			res, err := a.App.Test(r, -1)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			mu.Lock()
			statuses[res.StatusCode]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return statuses
}
