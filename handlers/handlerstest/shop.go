package handlerstest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/db"
)

// ShopClient is one browser against the test app: it keeps the cookies
// app.Test does not, and reads the CSRF token off the pages it gets.
type ShopClient struct {
	T       *testing.T
	A       *App
	Cookies map[string]string
	CSRF    string
	// header is sent with every request (X-Forwarded-For, …).
	Header map[string]string
}

// NewShopClient is a new shopper: it loads the catalog, for a cookie and
// the CSRF token.
func NewShopClient(t *testing.T, a *App) *ShopClient {
	t.Helper()
	s := &ShopClient{T: t, A: a, Cookies: map[string]string{}}
	s.Get("/").WantStatus(http.StatusOK)
	if s.CSRF == "" {
		t.Fatal("the catalog carries no CSRF token")
	}
	return s
}

// ShopPage is a finished exchange with its parsed HTML.
type ShopPage struct {
	T      *testing.T
	Status int
	Header http.Header
	Body   string
	Doc    *goquery.Document
}

// Send makes a request with the jar's cookies and keeps what it sets.
func (s *ShopClient) Send(method, path, body string, header map[string]string) *ShopPage {
	s.T.Helper()
	h := map[string]string{}
	var pairs []string
	for k, v := range s.Cookies {
		pairs = append(pairs, k+"="+v)
	}
	if len(pairs) > 0 {
		h["Cookie"] = strings.Join(pairs, "; ")
	}
	for k, v := range s.Header {
		h[k] = v
	}
	for k, v := range header {
		h[k] = v
	}
	r := Req{Method: method, Path: path, Header: h}
	if body != "" || method == http.MethodPost {
		r.Body, r.ContentType = body, "application/x-www-form-urlencoded"
	}
	res := s.A.Do(r)
	for _, c := range (&http.Response{Header: res.Header}).Cookies() {
		if c.MaxAge < 0 {
			delete(s.Cookies, c.Name)
		} else {
			s.Cookies[c.Name] = c.Value
		}
	}
	out := &ShopPage{T: s.T, Status: res.Status, Header: res.Header, Body: string(res.Body)}
	if doc, err := goquery.NewDocumentFromReader(bytes.NewReader(res.Body)); err == nil {
		out.Doc = doc
		if hx, ok := doc.Find("body").Attr("hx-headers"); ok {
			var m map[string]string
			if err := json.Unmarshal([]byte(hx), &m); err == nil && m["X-CSRF-Token"] != "" {
				s.CSRF = m["X-CSRF-Token"]
			}
		}
	}
	return out
}

// Get loads a page; hx makes it an htmx request.
func (s *ShopClient) Get(path string, hx ...bool) *ShopPage {
	s.T.Helper()
	return s.Send(http.MethodGet, path, "", hxHeader(hx))
}

// Post submits a form with the page's CSRF token (unless form sets _csrf).
func (s *ShopClient) Post(path string, form url.Values, hx ...bool) *ShopPage {
	s.T.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["_csrf"]; !ok {
		form.Set("_csrf", s.CSRF)
	}
	return s.Send(http.MethodPost, path, form.Encode(), hxHeader(hx))
}

// Submit posts a form as a browser does: a 303 is followed, and the page
// it leads to (which shows and so clears the flash) is the answer.
func (s *ShopClient) Submit(path string, form url.Values) *ShopPage {
	s.T.Helper()
	r := s.Post(path, form)
	if r.Status != http.StatusSeeOther {
		s.T.Fatalf("POST %s = %d, want 303; body:\n%s", path, r.Status, r.Body)
	}
	return s.Get(r.Header.Get("Location")).WantStatus(http.StatusOK)
}

func hxHeader(hx []bool) map[string]string {
	if len(hx) > 0 && hx[0] {
		return map[string]string{"HX-Request": "true"}
	}
	return nil
}

// WantStatus fails the test unless the status is as given.
func (r *ShopPage) WantStatus(status int) *ShopPage {
	r.T.Helper()
	wantAnswer(r.T, &Response{Status: r.Status, Header: r.Header}, r.Body, status, "")
	return r
}

// WantRedirect fails unless the answer is a 303 to location.
func (r *ShopPage) WantRedirect(location string) *ShopPage {
	r.T.Helper()
	wantAnswer(r.T, &Response{Status: r.Status, Header: r.Header}, r.Body, http.StatusSeeOther, location)
	return r
}

// wantAnswer fails t unless the answer r (with body) has status and, when
// location is not "", redirects there.
func wantAnswer(t *testing.T, r *Response, body string, status int, location string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body:\n%s", r.Status, status, body)
	}
	if got := r.Header.Get("Location"); location != "" && got != location {
		t.Fatalf("Location = %q, want %q", got, location)
	}
}

// Find selects in the page.
func (r *ShopPage) Find(sel string) *goquery.Selection {
	r.T.Helper()
	if r.Doc == nil {
		r.T.Fatalf("not HTML: %s", r.Body)
	}
	return r.Doc.Find(sel)
}

// TestID selects the elements with that data-testid.
func (r *ShopPage) TestID(id string) *goquery.Selection {
	r.T.Helper()
	return r.Find(`[data-testid="` + id + `"]`)
}

// Texts is the trimmed text of each element with that data-testid.
func (r *ShopPage) Texts(id string) []string {
	r.T.Helper()
	var out []string
	r.TestID(id).Each(func(_ int, s *goquery.Selection) {
		out = append(out, strings.Join(strings.Fields(s.Text()), " "))
	})
	return out
}

// Text is the trimmed text of the elements with that data-testid.
func (r *ShopPage) Text(id string) string {
	r.T.Helper()
	return strings.Join(r.Texts(id), " | ")
}

// IsFullPage reports whether the answer is a whole document.
func (r *ShopPage) IsFullPage() bool {
	return strings.Contains(r.Body, "<!doctype html>") || strings.Contains(r.Body, "<!DOCTYPE html>")
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

// Checkout places the cart with the details in form (Buyer() when nil)
// and returns the order number the confirmation shows, failing the test
// unless the answer sends the shopper there.
func (s *ShopClient) Checkout(form url.Values, hx ...bool) int64 {
	s.T.Helper()
	if form == nil {
		form = Buyer()
	}
	return s.Post("/checkout", form, hx...).ConfirmationNumber()
}

// confirmationPath is where a checkout sends the shopper.
var confirmationPath = regexp.MustCompile(`^/orders/confirmation/([0-9]+)$`)

// ConfirmationNumber fails unless the answer sends the shopper to a
// checkout's confirmation (a 303 for a form, HX-Redirect for htmx) and
// returns the checkout's order number.
func (r *ShopPage) ConfirmationNumber() int64 {
	r.T.Helper()
	to := r.Header.Get("Location")
	if r.Header.Get("HX-Redirect") != "" && r.Status == http.StatusOK {
		to = r.Header.Get("HX-Redirect")
	} else if r.Status != http.StatusSeeOther {
		r.T.Fatalf("status = %d, want a 303 to the confirmation; body:\n%s", r.Status, r.Body)
	}
	m := confirmationPath.FindStringSubmatch(to)
	if m == nil {
		r.T.Fatalf("sent to %q, want /orders/confirmation/{number}", to)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		r.T.Fatal(err)
	}
	return n
}

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
