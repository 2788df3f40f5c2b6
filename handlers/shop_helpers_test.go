package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"petstore/db"
)

// shopClient is one browser against the test app: it keeps the cookies
// app.Test does not, and reads the CSRF token off the pages it gets.
type shopClient struct {
	t       *testing.T
	a       *testApp
	cookies map[string]string
	csrf    string
	// header is sent with every request (X-Forwarded-For, …).
	header map[string]string
}

func newShopClient(t *testing.T, a *testApp) *shopClient {
	t.Helper()
	s := &shopClient{t: t, a: a, cookies: map[string]string{}}
	s.get("/").wantStatus(http.StatusOK)
	if s.csrf == "" {
		t.Fatal("the catalog carries no CSRF token")
	}
	return s
}

// shopResp is a finished exchange with its parsed HTML.
type shopResp struct {
	t      *testing.T
	Status int
	Header http.Header
	Body   string
	doc    *goquery.Document
}

// send makes a request with the jar's cookies and keeps what it sets.
func (s *shopClient) send(method, path, body string, header map[string]string) *shopResp {
	s.t.Helper()
	h := map[string]string{}
	var pairs []string
	for k, v := range s.cookies {
		pairs = append(pairs, k+"="+v)
	}
	if len(pairs) > 0 {
		h["Cookie"] = strings.Join(pairs, "; ")
	}
	for k, v := range s.header {
		h[k] = v
	}
	for k, v := range header {
		h[k] = v
	}
	r := req{method: method, path: path, header: h}
	if body != "" || method == http.MethodPost {
		r.body, r.contentType = body, "application/x-www-form-urlencoded"
	}
	res := s.a.do(r)
	for _, c := range (&http.Response{Header: res.Header}).Cookies() {
		if c.MaxAge < 0 {
			delete(s.cookies, c.Name)
		} else {
			s.cookies[c.Name] = c.Value
		}
	}
	out := &shopResp{t: s.t, Status: res.Status, Header: res.Header, Body: string(res.Body)}
	if doc, err := goquery.NewDocumentFromReader(bytes.NewReader(res.Body)); err == nil {
		out.doc = doc
		if hx, ok := doc.Find("body").Attr("hx-headers"); ok {
			var m map[string]string
			if err := json.Unmarshal([]byte(hx), &m); err == nil && m["X-CSRF-Token"] != "" {
				s.csrf = m["X-CSRF-Token"]
			}
		}
	}
	return out
}

// get loads a page; hx makes it an htmx request.
func (s *shopClient) get(path string, hx ...bool) *shopResp {
	s.t.Helper()
	return s.send(http.MethodGet, path, "", hxHeader(hx))
}

// post submits a form with the page's CSRF token (unless form sets _csrf).
func (s *shopClient) post(path string, form url.Values, hx ...bool) *shopResp {
	s.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["_csrf"]; !ok {
		form.Set("_csrf", s.csrf)
	}
	return s.send(http.MethodPost, path, form.Encode(), hxHeader(hx))
}

// submit posts a form as a browser does: a 303 is followed, and the page
// it leads to (which shows and so clears the flash) is the answer.
func (s *shopClient) submit(path string, form url.Values) *shopResp {
	s.t.Helper()
	r := s.post(path, form)
	if r.Status != http.StatusSeeOther {
		s.t.Fatalf("POST %s = %d, want 303; body:\n%s", path, r.Status, r.Body)
	}
	return s.get(r.Header.Get("Location")).wantStatus(http.StatusOK)
}

func hxHeader(hx []bool) map[string]string {
	if len(hx) > 0 && hx[0] {
		return map[string]string{"HX-Request": "true"}
	}
	return nil
}

// wantStatus fails the test unless the status is as given.
func (r *shopResp) wantStatus(status int) *shopResp {
	r.t.Helper()
	if r.Status != status {
		r.t.Fatalf("status = %d, want %d; body:\n%s", r.Status, status, r.Body)
	}
	return r
}

// wantRedirect fails unless the answer is a 303 to location.
func (r *shopResp) wantRedirect(location string) *shopResp {
	r.t.Helper()
	r.wantStatus(http.StatusSeeOther)
	if got := r.Header.Get("Location"); got != location {
		r.t.Fatalf("Location = %q, want %q", got, location)
	}
	return r
}

// find selects in the page.
func (r *shopResp) find(sel string) *goquery.Selection {
	r.t.Helper()
	if r.doc == nil {
		r.t.Fatalf("not HTML: %s", r.Body)
	}
	return r.doc.Find(sel)
}

// testid selects the elements with that data-testid.
func (r *shopResp) testid(id string) *goquery.Selection {
	r.t.Helper()
	return r.find(`[data-testid="` + id + `"]`)
}

// texts is the trimmed text of each element with that data-testid.
func (r *shopResp) texts(id string) []string {
	r.t.Helper()
	var out []string
	r.testid(id).Each(func(_ int, s *goquery.Selection) {
		out = append(out, strings.Join(strings.Fields(s.Text()), " "))
	})
	return out
}

// text is the trimmed text of the elements with that data-testid.
func (r *shopResp) text(id string) string {
	r.t.Helper()
	return strings.Join(r.texts(id), " | ")
}

// isFullPage reports whether the answer is a whole document.
func (r *shopResp) isFullPage() bool {
	return strings.Contains(r.Body, "<!doctype html>") || strings.Contains(r.Body, "<!DOCTYPE html>")
}

// shopPetSpec is a pet to seed: its category, name and stock.
type shopPetSpec struct {
	cat, name string
	stock     int64
}

// shopSeed is what seedShop made, by name.
type shopSeed struct {
	cats map[string]*db.Category
	pets map[string]*db.Pet
}

// seedShop creates the categories and pets through the store, in order.
func seedShop(t *testing.T, a *testApp, specs ...shopPetSpec) *shopSeed {
	t.Helper()
	ctx := context.Background()
	s := &shopSeed{cats: map[string]*db.Category{}, pets: map[string]*db.Pet{}}
	for _, spec := range specs {
		cat := s.cats[spec.cat]
		if cat == nil {
			c, err := a.store.CreateCategory(ctx, db.NewCategory{Name: ptr(spec.cat)})
			if err != nil {
				t.Fatal(err)
			}
			cat, s.cats[spec.cat] = c, c
		}
		s.pets[spec.name] = s.addPet(t, a, cat.ID, spec.name, spec.stock)
	}
	return s
}

func (s *shopSeed) addPet(t *testing.T, a *testApp, catID int64, name string, stock int64) *db.Pet {
	t.Helper()
	ctx := context.Background()
	p, err := a.store.CreatePet(ctx, db.NewPet{Name: &name, CategoryID: &catID})
	if err != nil {
		t.Fatal(err)
	}
	if stock != 1 {
		if _, err := a.store.SetInventory(ctx, p.ID, db.InventoryUpdate{Quantity: &stock}); err != nil {
			t.Fatal(err)
		}
	}
	p, err = a.store.FindPetByID(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// setStock changes a pet's stock behind the shopper's back.
func setStock(t *testing.T, a *testApp, petID, stock int64) {
	t.Helper()
	if _, err := a.store.SetInventory(context.Background(), petID, db.InventoryUpdate{Quantity: &stock}); err != nil {
		t.Fatal(err)
	}
}

// petStock reads a pet's stock now.
func petStock(t *testing.T, a *testApp, petID int64) int64 {
	t.Helper()
	p, err := a.store.FindPetByID(context.Background(), petID)
	if err != nil {
		t.Fatal(err)
	}
	return p.Stock
}

// form builds url.Values from pairs.
func form(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// postAtOnce sends n copies of one form post through the app at the same
// moment (a script replaying a cookie) and counts the answers by status.
// setCookies adds the sender's cookies to each request.
func postAtOnce(t *testing.T, a *testApp, n int, path, body string, setCookies func(*http.Request)) map[int]int {
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
			res, err := a.app.Test(r, -1)
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
