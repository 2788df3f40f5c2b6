package browser_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"petstore/views/components"
	"petstore/web/browser"
	"petstore/web/browser/browsertest"
)

// replyRoute is POST /reply: it ends with a browser.Reply to /page made
// from the form: the message "Saved." (text, when sent; none with
// quiet=1), a Fragment answering "fragment" with fragment=1, the query's
// status as its Status, HXRedirect with hxredirect=1; note, when sent, is
// set in the session first.
func replyRoute(s *browser.Sessions) func(fiber.Router) {
	return func(r fiber.Router) {
		r.Post("/reply", withSession(s, func(c *fiber.Ctx, sess *browser.Session) error {
			if note := c.FormValue("note"); note != "" {
				sess.Set("note", note)
			}
			reply := browser.Reply{
				To: "/page", Flash: components.Flash{Kind: components.FlashSuccess, Text: c.FormValue("text", "Saved.")},
				Flashes: testFlashes, Status: c.QueryInt("status"), HXRedirect: c.FormValue("hxredirect") == "1",
			}
			if c.FormValue("quiet") == "1" {
				reply.Flash.Text = ""
			}
			if c.FormValue("fragment") == "1" {
				reply.Fragment = func() error { return c.SendString("fragment") }
			}
			return reply.Send(c, sess)
		}))
	}
}

// TestReply: how a form post ends. A plain form is sent to the page with
// its message waiting there (303); htmx gets the fragment in place, with
// its status, and no message waits; htmx without a fragment is sent on
// as a plain form is, or by HX-Redirect when the reply says so. The
// session is saved whenever the post wrote to it, and only then.
func TestReply(t *testing.T) {
	s := browser.NewSessions([][]byte{secret})
	b := visitor(t, newKit(t, s, replyRoute(s)))
	flashes := func() string {
		t.Helper()
		return b.Get("/page").WantStatus(http.StatusOK).Text("flash")
	}
	hx := func(form url.Values, query string, header ...string) *browsertest.Page {
		t.Helper()
		r := httptest.NewRequest(http.MethodPost, "/reply"+query, strings.NewReader(form.Encode()))
		r.Header.Set(fiber.HeaderContentType, fiber.MIMEApplicationForm)
		r.Header.Set("HX-Request", "true")
		r.Header.Set(browser.CSRFHeader, b.CSRF)
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		return b.Do(r)
	}
	saved := func(p *browsertest.Page) bool { return len(p.Header.Values(fiber.HeaderSetCookie)) > 0 }

	t.Run("plain form", func(t *testing.T) {
		p := b.Post("/reply", url.Values{"fragment": {"1"}, "hxredirect": {"1"}}).WantRedirect("/page")
		if !saved(p) {
			t.Error("the message was not saved in the session")
		}
		if got := flashes(); got != "Saved." {
			t.Errorf("the page after shows %q, want the message", got)
		}
		b.Post("/reply", url.Values{"quiet": {"1"}}).WantRedirect("/page")
		if got := flashes(); got != "" {
			t.Errorf("a reply without a message left %q", got)
		}
	})
	t.Run("htmx with a fragment", func(t *testing.T) {
		p := hx(url.Values{"fragment": {"1"}}, "?status=422").WantStatus(http.StatusUnprocessableEntity)
		if p.Body != "fragment" || p.Header.Get("Location") != "" || saved(p) {
			t.Errorf("answer %q, Location %q, saved %v; want the fragment alone", p.Body, p.Header.Get("Location"), saved(p))
		}
		hx(url.Values{"fragment": {"1"}}, "").WantStatus(http.StatusOK)
		p = hx(url.Values{"fragment": {"1"}, "note": {"written"}}, "").WantStatus(http.StatusOK)
		if !saved(p) {
			t.Error("a session the post wrote to was not saved")
		}
		if got := flashes(); got != "" {
			t.Errorf("the fragment's message also waits for the next page: %q", got)
		}
		if got := b.Get("/page").Text("note"); got != "written" {
			t.Errorf("note = %q", got)
		}
	})
	t.Run("htmx without a fragment", func(t *testing.T) {
		hx(url.Values{}, "").WantRedirect("/page")
		if got := flashes(); got != "Saved." {
			t.Errorf("the page after shows %q, want the message", got)
		}
		p := hx(url.Values{"hxredirect": {"1"}, "text": {"Found."}}, "").WantStatus(http.StatusOK)
		if p.Header.Get("HX-Redirect") != "/page" || p.Header.Get("Location") != "" || !saved(p) {
			t.Errorf("HX-Redirect %q, Location %q, saved %v; want HX-Redirect to /page, the session saved",
				p.Header.Get("HX-Redirect"), p.Header.Get("Location"), saved(p))
		}
		if got := flashes(); got != "Found." {
			t.Errorf("the page htmx is sent to shows %q, want the message", got)
		}
		p = hx(url.Values{"hxredirect": {"1"}, "quiet": {"1"}}, "").WantStatus(http.StatusOK)
		if saved(p) {
			t.Error("the session was saved, though nothing was written to it")
		}
		hx(url.Values{"hxredirect": {"1"}, "quiet": {"1"}, "note": {"again"}}, "").WantStatus(http.StatusOK)
		if got := b.Get("/page").Text("note"); got != "again" {
			t.Errorf("note = %q, want the one set before HX-Redirect", got)
		}
	})
	t.Run("history restore", func(t *testing.T) {
		hx(url.Values{"fragment": {"1"}}, "", "HX-History-Restore-Request", "true").WantRedirect("/page")
		if got := flashes(); got != "Saved." {
			t.Errorf("the page after shows %q", got)
		}
	})
}
