package handlers_test

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
	staffName     = "alice"
	staffPassword = "correct horse battery staple"
)

// addStaff creates a console user.
func (a *testApp) addStaff(username, password string) *db.StaffUser {
	a.t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		a.t.Fatal(err)
	}
	u, err := a.store.CreateStaffUser(context.Background(), username, string(hash))
	if err != nil {
		a.t.Fatalf("create staff user: %v", err)
	}
	return u
}

// browser is a console visitor: a cookie jar and the last CSRF token seen.
type browser struct {
	t       *testing.T
	a       *testApp
	cookies map[string]*http.Cookie
	csrf    string
	// header is sent with every request (X-Forwarded-For, …).
	header map[string]string
}

func (a *testApp) browser(t *testing.T) *browser {
	return &browser{t: t, a: a, cookies: map[string]*http.Cookie{}, header: map[string]string{}}
}

// signedIn is a browser signed in as a fresh staff user (alice).
func (a *testApp) signedIn(t *testing.T) *browser {
	t.Helper()
	a.addStaff(staffName, staffPassword)
	b := a.browser(t)
	// Follow the redirect as a browser does: signing in renews the CSRF token.
	b.follow(b.login(staffName, staffPassword).wantStatus(http.StatusSeeOther)).wantStatus(http.StatusOK)
	return b
}

// page is a console answer with its HTML parsed.
type page struct {
	t *testing.T
	*response
	doc *goquery.Document
}

// login loads the sign-in form (for the CSRF token) and posts it.
func (b *browser) login(username, password string) *page {
	b.t.Helper()
	b.get("/staff/login").wantStatus(http.StatusOK)
	return b.post("/staff/login", url.Values{"username": {username}, "password": {password}})
}

func (b *browser) get(path string) *page { return b.send(http.MethodGet, path, nil, false) }

// hx is a GET as htmx makes it (HX-Request: true).
func (b *browser) hx(path string) *page { return b.send(http.MethodGet, path, nil, true) }

// post submits a form with the CSRF token unless the form has _csrf.
func (b *browser) post(path string, form url.Values) *page {
	return b.send(http.MethodPost, path, form, false)
}

// hxPost submits as htmx does: the token in the X-CSRF-Token header.
func (b *browser) hxPost(path string, form url.Values) *page {
	return b.send(http.MethodPost, path, form, true)
}

func (b *browser) send(method, path string, form url.Values, htmx bool) *page {
	b.t.Helper()
	if form == nil && method == http.MethodPost {
		form = url.Values{}
	}
	if form != nil && !htmx && !form.Has("_csrf") {
		form.Set("_csrf", b.csrf)
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
			r.Header.Set("X-CSRF-Token", b.csrf)
		}
	}
	for k, v := range b.header {
		r.Header.Set(k, v)
	}
	for _, c := range b.cookies {
		r.AddCookie(c)
	}
	res, err := b.a.app.Test(r, -1)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	for _, c := range res.Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c
		}
	}
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatalf("%s %s: read body: %v", method, path, err)
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
		b.t.Fatalf("%s %s: parse HTML: %v", method, path, err)
	}
	p := &page{t: b.t, response: &response{Status: res.StatusCode, Header: res.Header, Body: raw}, doc: doc}
	if tok, ok := doc.Find(`input[name="_csrf"]`).First().Attr("value"); ok && tok != "" {
		b.csrf = tok
	}
	return p
}

// wantStatus fails the test unless the answer has that status.
func (p *page) wantStatus(status int) *page {
	p.t.Helper()
	if p.Status != status {
		p.t.Fatalf("status = %d, want %d; body:\n%s", p.Status, status, p.Body)
	}
	return p
}

// wantRedirect fails unless the answer redirects (303) to location.
func (p *page) wantRedirect(location string) *page {
	p.t.Helper()
	p.wantStatus(http.StatusSeeOther)
	if got := p.Header.Get("Location"); got != location {
		p.t.Fatalf("Location = %q, want %q", got, location)
	}
	return p
}

// find selects by CSS.
func (p *page) find(sel string) *goquery.Selection { return p.doc.Find(sel) }

// id selects by data-testid.
func (p *page) id(testid string) *goquery.Selection {
	return p.doc.Find(`[data-testid="` + testid + `"]`)
}

// text is the text of a selection, its text nodes joined by spaces (the
// generated HTML has no whitespace between cells) and spaces collapsed.
func text(s *goquery.Selection) string {
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

// wantText fails unless the data-testid element's text contains want.
func (p *page) wantText(testid, want string) {
	p.t.Helper()
	s := p.id(testid)
	if s.Length() == 0 {
		p.t.Fatalf("no [data-testid=%q] in:\n%s", testid, p.Body)
	}
	if got := text(s); !strings.Contains(got, want) {
		p.t.Fatalf("[data-testid=%q] = %q, want it to contain %q", testid, got, want)
	}
}

// follow loads the page a redirect points to.
func (b *browser) follow(p *page) *page {
	b.t.Helper()
	loc := p.Header.Get("Location")
	if loc == "" {
		b.t.Fatalf("no Location on %d answer", p.Status)
	}
	return b.get(loc)
}
