package browser_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"petstore/web/browser"
	"petstore/web/browser/browsertest"
)

// TestCSRF: a first visit gets a token kept in its session; every render
// shows it masked afresh (SPEC §17: two renders differ, both verify). An
// unsafe request passes with it, in the form or the X-CSRF-Token header,
// and is refused (403) without it, with a forged one, with another
// session's, or with it in the URL's query alone. Safe methods need none.
func TestCSRF(t *testing.T) {
	app := newKit(t, browser.NewSessions([][]byte{secret}))
	b := visitor(t, app)
	token := b.CSRF
	if b.Get("/page"); b.CSRF == token {
		t.Errorf("two renders carry the same token %q: it is not masked", token)
	}
	for i, tok := range []string{token, b.CSRF} {
		if p := b.Post("/note", url.Values{"note": {"render"}, "_csrf": {tok}}); p.Status != http.StatusOK {
			t.Errorf("the token of render %d: %d, want 200", i+1, p.Status)
		}
	}
	if p := b.Post("/note?_csrf="+url.QueryEscape(token), url.Values{"note": {"x"}, "_csrf": {""}}); p.Status != http.StatusForbidden {
		t.Errorf("the token in the URL's query: %d, want 403", p.Status)
	}
	other := visitor(t, app)
	if other.CSRF == token {
		t.Fatal("two sessions have one token")
	}

	b.Post("/note", url.Values{"note": {"form"}}).WantStatus(http.StatusOK)
	b.HXPost("/note", url.Values{"note": {"header"}}).WantStatus(http.StatusOK)
	if got := b.Get("/page").Text("note"); got != "header" {
		t.Errorf("note = %q, want the header post's", got)
	}
	for name, form := range map[string]url.Values{
		"missing":             {"note": {"x"}, "_csrf": {""}},
		"forged":              {"note": {"x"}, "_csrf": {"forged"}},
		"another session's":   {"note": {"x"}, "_csrf": {other.CSRF}},
		"the token with more": {"note": {"x"}, "_csrf": {token + "x"}},
		"the token cut short": {"note": {"x"}, "_csrf": {token[:len(token)-1]}},
	} {
		if p := b.Post("/note", form); p.Status != http.StatusForbidden {
			t.Errorf("%s token: %d, want 403", name, p.Status)
		}
	}
	real := b.CSRF
	b.CSRF = other.CSRF
	if p := b.HXPost("/note", url.Values{"note": {"x"}}); p.Status != http.StatusForbidden {
		t.Errorf("another session's token in the header: %d, want 403", p.Status)
	}
	b.CSRF = real
	if got := b.Get("/page").Text("note"); got != "header" {
		t.Errorf("note = %q after refused posts, want it unchanged", got)
	}
	// No cookie at all: the request makes a new session, whose token the
	// post cannot know.
	stranger := browsertest.New(t, app)
	stranger.CSRF = token
	if p := stranger.Post("/note", url.Values{"note": {"x"}}); p.Status != http.StatusForbidden {
		t.Errorf("a post without the session: %d, want 403", p.Status)
	}
}

// TestRenewCSRF: a renewed token (a sign-in) replaces the old one on the
// next request; the old one is refused from then on.
func TestRenewCSRF(t *testing.T) {
	s := browser.NewSessions([][]byte{secret})
	app := newKit(t, s, func(r fiber.Router) {
		r.Post("/renew", withSession(s, func(c *fiber.Ctx, sess *browser.Session) error {
			sess.RenewCSRF()
			return sess.Save()
		}))
	})
	b := visitor(t, app)
	old := b.CSRF
	b.Post("/renew", nil).WantStatus(http.StatusOK)
	if b.Get("/page"); b.CSRF == old || b.CSRF == "" {
		t.Fatalf("token %q after renewal, was %q", b.CSRF, old)
	}
	b.Post("/note", url.Values{"note": {"new"}}).WantStatus(http.StatusOK)
	if p := b.Post("/note", url.Values{"note": {"old"}, "_csrf": {old}}); p.Status != http.StatusForbidden {
		t.Errorf("the token from before the renewal: %d, want 403", p.Status)
	}
}

// TestCSRFUpload: on a route that reads its body itself, a plain form's
// token must be the multipart body's first part, and the route reads the
// parts after it; a refusal closes the connection, so the rest of the
// body is never read. The header's token (htmx, console.js) leaves every
// part to the route, and a small form that is not multipart is read as
// any route's, at most web.MaxBody.
func TestCSRFUpload(t *testing.T) {
	app := newKit(t, browser.NewSessions([][]byte{secret}))
	b := visitor(t, app)
	upload := func(js bool, fields ...string) *browsertest.Page {
		t.Helper()
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		for i := 0; i+1 < len(fields); i += 2 {
			if fields[i] == "file" {
				part, _ := w.CreateFormFile("photos", fields[i+1])
				_, _ = part.Write([]byte("bytes of " + fields[i+1]))
			} else {
				_ = w.WriteField(fields[i], fields[i+1])
			}
		}
		_ = w.Close()
		r := httptest.NewRequest(http.MethodPost, "/upload", &buf)
		r.Header.Set(fiber.HeaderContentType, w.FormDataContentType())
		if js {
			r.Header.Set("HX-Request", "true")
			r.Header.Set(browser.CSRFHeader, b.CSRF)
		}
		return b.Do(r)
	}
	refused := func(name string, p *browsertest.Page) {
		t.Helper()
		if p.Status != http.StatusForbidden || p.Header.Get(fiber.HeaderConnection) != "close" {
			t.Errorf("%s: %d, Connection %q; want 403 and the connection closed", name, p.Status, p.Header.Get(fiber.HeaderConnection))
		}
	}

	if got := upload(false, "_csrf", b.CSRF, "file", "a.jpg", "file", "b.jpg").WantStatus(http.StatusOK).Body; got != "photos=a.jpg,photos=b.jpg" {
		t.Errorf("the route read %q, want the two files after the token", got)
	}
	if got := upload(true, "file", "a.jpg").WantStatus(http.StatusOK).Body; got != "photos=a.jpg" {
		t.Errorf("with the header's token the route read %q, want the file", got)
	}
	refused("no token", upload(false, "file", "a.jpg"))
	refused("a forged token", upload(false, "_csrf", "forged", "file", "a.jpg"))
	refused("the token after a file", upload(false, "file", "a.jpg", "_csrf", b.CSRF))
	refused("the token after 4 KiB", upload(false, "pad", strings.Repeat("x", 5000), "_csrf", b.CSRF))

	form := func(body string) *browsertest.Page {
		r := httptest.NewRequest(http.MethodPost, "/upload", strings.NewReader(body))
		r.Header.Set(fiber.HeaderContentType, fiber.MIMEApplicationForm)
		return b.Do(r)
	}
	// Not multipart: the token is read from the (small) form, and the
	// route finds it holds no parts.
	if got := form(url.Values{"_csrf": {b.CSRF}}.Encode()).WantStatus(http.StatusOK).Body; got != "not multipart" {
		t.Errorf("a small form with the token: the route answered %q", got)
	}
	if p := form(url.Values{"_csrf": {"forged"}}.Encode()); p.Status != http.StatusForbidden {
		t.Errorf("a small form with a forged token: %d, want 403", p.Status)
	}
	if p := form(url.Values{"_csrf": {b.CSRF}, "pad": {strings.Repeat("x", 70<<10)}}.Encode()); p.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("a form past 64 KiB on the upload route: %d, want 413", p.Status)
	}
}
