// Package browsertest is the one test browser of apps built with the
// browser kit (web/browser): it sends requests through fiber's app.Test,
// keeps the cookies app.Test does not, reads the CSRF token off the pages
// it gets and sends it back as a plain form does (the _csrf field) or as
// htmx does (the X-CSRF-Token header). Page is an answer with its HTML
// parsed, for goquery.
package browsertest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/gofiber/fiber/v2"

	"petstore/web/browser"
)

// Browser is one visitor: a cookie jar, the last CSRF token seen and
// headers sent with every request.
type Browser struct {
	T       testing.TB
	App     *fiber.App
	Cookies map[string]*http.Cookie
	CSRF    string
	// Header is sent with every request (X-Forwarded-For, …).
	Header map[string]string
}

// New is a visitor of app with no cookies.
func New(t testing.TB, app *fiber.App) *Browser {
	return &Browser{T: t, App: app, Cookies: map[string]*http.Cookie{}, Header: map[string]string{}}
}

// Get loads a page.
func (b *Browser) Get(path string) *Page { return b.Send(http.MethodGet, path, nil, false) }

// HX is a GET as htmx makes it (HX-Request: true).
func (b *Browser) HX(path string) *Page { return b.Send(http.MethodGet, path, nil, true) }

// Post submits a form with the CSRF token in it, unless the form sets
// _csrf itself.
func (b *Browser) Post(path string, form url.Values) *Page {
	return b.Send(http.MethodPost, path, form, false)
}

// HXPost submits a form as htmx does: HX-Request, and the CSRF token in the
// X-CSRF-Token header.
func (b *Browser) HXPost(path string, form url.Values) *Page {
	return b.Send(http.MethodPost, path, form, true)
}

// Submit posts a form as a browser does: the 303 it wants is followed, and
// the page it leads to (which shows, and so takes, the flash) is the
// answer.
func (b *Browser) Submit(path string, form url.Values) *Page {
	b.T.Helper()
	return b.Follow(b.Post(path, form).WantStatus(http.StatusSeeOther)).WantStatus(http.StatusOK)
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

// Send makes a request with the jar's cookies: a form post carries the
// CSRF token, in the form, or for htmx in X-CSRF-Token. A POST without a
// form sends an empty one.
func (b *Browser) Send(method, path string, form url.Values, htmx bool) *Page {
	b.T.Helper()
	if form == nil && method == http.MethodPost {
		form = url.Values{}
	}
	if form != nil && !htmx && !form.Has(browser.CSRFField) {
		form.Set(browser.CSRFField, b.CSRF)
	}
	body := ""
	if form != nil {
		body = form.Encode()
	}
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if form != nil {
		r.Header.Set(fiber.HeaderContentType, fiber.MIMEApplicationForm)
	}
	if htmx {
		r.Header.Set("HX-Request", "true")
		if method != http.MethodGet {
			r.Header.Set(browser.CSRFHeader, b.CSRF)
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
	res, err := b.App.Test(r, -1)
	if err != nil {
		b.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	if res.Close { // Go's reader takes it out of the header
		res.Header.Set(fiber.HeaderConnection, "close")
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
	p := &Page{T: b.T, Status: res.StatusCode, Header: res.Header, Body: string(raw), Doc: parse(b.T, method, path, string(raw))}
	if token := pageToken(p.Doc); token != "" {
		b.CSRF = token
	}
	return p
}

// parse reads an answer's HTML. A bare row or table body (an htmx
// fragment) only parses inside a table.
func parse(t testing.TB, method, path, html string) *goquery.Document {
	t.Helper()
	switch trimmed := strings.TrimSpace(html); {
	case strings.HasPrefix(trimmed, "<tr"):
		html = "<table><tbody>" + html + "</tbody></table>"
	case strings.HasPrefix(trimmed, "<tbody"):
		html = "<table>" + html + "</table>"
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		t.Fatalf("%s %s: parse HTML: %v", method, path, err)
	}
	return doc
}

// pageToken is the CSRF token a page carries: in its forms' _csrf field,
// or in the X-CSRF-Token header htmx sends from <body hx-headers>.
func pageToken(doc *goquery.Document) string {
	if token, ok := doc.Find(`input[name="` + browser.CSRFField + `"]`).First().Attr("value"); ok && token != "" {
		return token
	}
	if hx, ok := doc.Find("body").Attr("hx-headers"); ok {
		var m map[string]string
		if json.Unmarshal([]byte(hx), &m) == nil {
			return m[browser.CSRFHeader]
		}
	}
	return ""
}
