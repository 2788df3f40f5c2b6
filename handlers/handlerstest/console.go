package handlerstest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/net/html"

	"petstore/db"
)

// Test staff credentials; the hash uses bcrypt's minimum cost to keep the
// tests fast.
const (
	StaffName     = "alice"
	StaffPassword = "correct horse battery staple"
)

// AddStaff creates a console user.
func (a *App) AddStaff(username, password string) *db.StaffUser {
	a.T.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		a.T.Fatal(err)
	}
	u, err := a.Store.CreateStaffUser(context.Background(), username, string(hash))
	if err != nil {
		a.T.Fatalf("create staff user: %v", err)
	}
	return u
}

// Browser is a console visitor: a cookie jar and the last CSRF token seen.
type Browser struct {
	T       *testing.T
	A       *App
	Cookies map[string]*http.Cookie
	CSRF    string
	// header is sent with every request (X-Forwarded-For, …).
	Header map[string]string
}

// Browser is a new console visitor with no cookies.
func (a *App) Browser(t *testing.T) *Browser {
	return &Browser{T: t, A: a, Cookies: map[string]*http.Cookie{}, Header: map[string]string{}}
}

// SignedIn is a browser signed in as a fresh staff user (alice).
func (a *App) SignedIn(t *testing.T) *Browser {
	t.Helper()
	a.AddStaff(StaffName, StaffPassword)
	b := a.Browser(t)
	// Follow the redirect as a browser does: signing in renews the CSRF token.
	b.Follow(b.Login(StaffName, StaffPassword).WantStatus(http.StatusSeeOther)).WantStatus(http.StatusOK)
	return b
}

// Page is a console answer with its HTML parsed.
type Page struct {
	T *testing.T
	*Response
	Doc *goquery.Document
}

// Login loads the sign-in form (for the CSRF token) and posts it.
func (b *Browser) Login(username, password string) *Page {
	b.T.Helper()
	b.Get("/staff/login").WantStatus(http.StatusOK)
	return b.Post("/staff/login", url.Values{"username": {username}, "password": {password}})
}

// Get loads a page.
func (b *Browser) Get(path string) *Page { return b.Send(http.MethodGet, path, nil, false) }

// HX is a GET as htmx makes it (HX-Request: true).
func (b *Browser) HX(path string) *Page { return b.Send(http.MethodGet, path, nil, true) }

// Post submits a form with the CSRF token unless the form has _csrf.
func (b *Browser) Post(path string, form url.Values) *Page {
	return b.Send(http.MethodPost, path, form, false)
}

// HXPost submits as htmx does: the token in the X-CSRF-Token header.
func (b *Browser) HXPost(path string, form url.Values) *Page {
	return b.Send(http.MethodPost, path, form, true)
}

// Send makes a request with the jar's cookies (a form post carries the
// CSRF token: in the form, or for htmx in X-CSRF-Token) and keeps the
// cookies and the CSRF token the answer brings.
func (b *Browser) Send(method, path string, form url.Values, htmx bool) *Page {
	b.T.Helper()
	if form == nil && method == http.MethodPost {
		form = url.Values{}
	}
	if form != nil && !htmx && !form.Has("_csrf") {
		form.Set("_csrf", b.CSRF)
	}
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	r := httptest.NewRequest(method, path, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if htmx {
		r.Header.Set("HX-Request", "true")
		if method != http.MethodGet {
			r.Header.Set("X-CSRF-Token", b.CSRF)
		}
	}
	return b.Do(r)
}

// Do makes a request with the jar's cookies and the browser's headers, and
// keeps the cookies and the CSRF token the answer brings.
func (b *Browser) Do(r *http.Request) *Page {
	b.T.Helper()
	method, path := r.Method, r.URL.Path
	for k, v := range b.Header {
		r.Header.Set(k, v)
	}
	for _, c := range b.Cookies {
		r.AddCookie(c)
	}
	res, err := b.A.App.Test(r, -1)
	if err != nil {
		b.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	if res.Close { // Go's reader takes it out of the header
		res.Header.Set("Connection", "close")
	}
	for _, c := range res.Cookies() {
		if c.MaxAge < 0 {
			delete(b.Cookies, c.Name)
		} else {
			b.Cookies[c.Name] = c
		}
	}
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		b.T.Fatalf("%s %s: read body: %v", method, path, err)
	}
	// A bare row or table body (an htmx fragment) only parses inside a table.
	html := string(raw)
	switch trimmed := strings.TrimSpace(html); {
	case strings.HasPrefix(trimmed, "<tr"):
		html = "<table><tbody>" + html + "</tbody></table>"
	case strings.HasPrefix(trimmed, "<tbody"):
		html = "<table>" + html + "</table>"
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		b.T.Fatalf("%s %s: parse HTML: %v", method, path, err)
	}
	p := &Page{T: b.T, Response: &Response{Status: res.StatusCode, Header: res.Header, Body: raw}, Doc: doc}
	if tok, ok := doc.Find(`input[name="_csrf"]`).First().Attr("value"); ok && tok != "" {
		b.CSRF = tok
	}
	return p
}

// WantStatus fails the test unless the answer has that status.
func (p *Page) WantStatus(status int) *Page {
	p.T.Helper()
	wantAnswer(p.T, p.Response, string(p.Body), status, "")
	return p
}

// WantRedirect fails unless the answer redirects (303) to location.
func (p *Page) WantRedirect(location string) *Page {
	p.T.Helper()
	wantAnswer(p.T, p.Response, string(p.Body), http.StatusSeeOther, location)
	return p
}

// Find selects by CSS.
func (p *Page) Find(sel string) *goquery.Selection { return p.Doc.Find(sel) }

// ID selects by data-testid.
func (p *Page) ID(testid string) *goquery.Selection {
	return p.Doc.Find(`[data-testid="` + testid + `"]`)
}

// Text is the text of a selection, its text nodes joined by spaces (the
// generated HTML has no whitespace between cells) and spaces collapsed.
func Text(s *goquery.Selection) string {
	var parts []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			parts = append(parts, n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range s.Nodes {
		walk(n)
	}
	return strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
}

// WantText fails unless the data-testid element's text contains want.
func (p *Page) WantText(testid, want string) {
	p.T.Helper()
	s := p.ID(testid)
	if s.Length() == 0 {
		p.T.Fatalf("no [data-testid=%q] in:\n%s", testid, p.Body)
	}
	if got := Text(s); !strings.Contains(got, want) {
		p.T.Fatalf("[data-testid=%q] = %q, want it to contain %q", testid, got, want)
	}
}

// Follow loads the page a redirect points to.
func (b *Browser) Follow(p *Page) *Page {
	b.T.Helper()
	loc := p.Header.Get("Location")
	if loc == "" {
		b.T.Fatalf("no Location on %d answer", p.Status)
	}
	return b.Get(loc)
}

// BanKey drives a key on a tiny limit into a ban through the API.
func (a *App) BanKey(plain string, perMinute int64, strikes int) {
	a.T.Helper()
	for i := int64(0); i < perMinute; i++ {
		a.Do(Req{Method: "GET", Path: "/api/pets", Key: plain}).Want(a.T, 200)
	}
	a.Do(Req{Method: "GET", Path: "/api/pets", Key: plain}).Want(a.T, 429, "rate_limited")
	for i := 1; i < strikes; i++ {
		a.Do(Req{Method: "GET", Path: "/api/pets", Key: plain}).Want(a.T, 429, "rate_limited")
	}
	a.Do(Req{Method: "GET", Path: "/api/pets", Key: plain}).Want(a.T, 403, "api_key_banned")
}
