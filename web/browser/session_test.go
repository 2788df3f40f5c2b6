package browser_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"petstore/web"
	"petstore/web/browser"
	"petstore/web/ratelimit"
)

// TestSessionValues: what a request sets in its session the next request
// of that browser reads, and a deleted value is gone; every step of one
// request shares one session.
func TestSessionValues(t *testing.T) {
	s := browser.NewSessions([][]byte{secret})
	app := newKit(t, s, func(r fiber.Router) {
		r.Post("/forget", withSession(s, func(c *fiber.Ctx, sess *browser.Session) error {
			again, err := s.Get(c, sessionName)
			if err != nil || again != sess {
				t.Errorf("a second Get in the request gave another session (%v)", err)
			}
			sess.Delete("note")
			return sess.Save()
		}))
	})
	b := visitor(t, app)
	b.Post("/note", url.Values{"note": {"kept"}}).WantStatus(http.StatusOK)
	if got := b.Get("/page").Text("note"); got != "kept" {
		t.Errorf("note = %q, want kept", got)
	}
	if got := visitor(t, app).Get("/page").Text("note"); got != "" {
		t.Errorf("another browser reads %q", got)
	}
	b.Post("/forget", nil).WantStatus(http.StatusOK)
	if got := b.Get("/page").Text("note"); got != "" {
		t.Errorf("note = %q after Delete", got)
	}
}

// TestSessionKeys: SESSION_KEYS rotation. A cookie sealed with an older
// key still opens while that key is listed after the new one; once it is
// dropped, or when the cookie was tampered with, the browser starts a
// fresh session (no error, an empty note, a new token).
func TestSessionKeys(t *testing.T) {
	older := []byte("fedcba9876543210fedcba9876543210")
	b := visitor(t, newKit(t, browser.NewSessions([][]byte{older})))
	b.Post("/note", url.Values{"note": {"sealed with the older key"}}).WantStatus(http.StatusOK)
	cookie := *b.Cookies[sessionName]

	b.App = newKit(t, browser.NewSessions([][]byte{secret, older}))
	if got := b.Get("/page").WantStatus(http.StatusOK).Text("note"); got != "sealed with the older key" {
		t.Errorf("with the older key listed second: note = %q", got)
	}

	for name, value := range map[string]string{
		"the older key dropped": cookie.Value,
		"tampered":              cookie.Value[:len(cookie.Value)-4] + "AAAA",
		"not a cookie of ours":  "garbage",
	} {
		c := visitor(t, newKit(t, browser.NewSessions([][]byte{secret})))
		token := c.CSRF
		c.Cookies[sessionName] = &http.Cookie{Name: sessionName, Value: value}
		p := c.Get("/page").WantStatus(http.StatusOK)
		if got := p.Text("note"); got != "" {
			t.Errorf("%s: note = %q, want a fresh session", name, got)
		}
		if c.CSRF == "" || c.CSRF == token {
			t.Errorf("%s: token %q, want a fresh session's", name, c.CSRF)
		}
	}
}

// TestSessionCookie: the cookie is HttpOnly, SameSite=Lax, for the whole
// site, kept 30 days, and Secure only over TLS (as a trusted proxy says);
// a request that saves its session twice (the token of a first visit,
// then a value) sends one cookie holding both.
func TestSessionCookie(t *testing.T) {
	s := browser.NewSessions([][]byte{secret})
	save := func(r fiber.Router) {
		r.Get("/first", withSession(s, func(c *fiber.Ctx, sess *browser.Session) error {
			sess.Set("note", "first visit")
			if err := sess.Save(); err != nil {
				return err
			}
			return page(c, "", nil)
		}))
	}
	app := newKit(t, s, save)
	r := httptest.NewRequest(http.MethodGet, "/first", nil)
	r.Header.Set("X-Forwarded-Proto", "https") // from a peer no one trusts
	res, err := app.Test(r, -1)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cookies := res.Cookies()
	if len(cookies) != 1 || len(res.Header.Values(fiber.HeaderSetCookie)) != 1 {
		t.Fatalf("a first visit that saves again sets %q, want one cookie", res.Header.Values(fiber.HeaderSetCookie))
	}
	c := cookies[0]
	if c.Name != sessionName || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.MaxAge != 30*24*3600 || c.Secure {
		t.Errorf("cookie = %+v, want HttpOnly, SameSite=Lax, Path=/, 30 days, not Secure over plain HTTP", c)
	}
	b := visitor(t, app)
	b.Cookies[sessionName] = c
	if got := b.Get("/page").Text("note"); got != "first visit" {
		t.Errorf("the one cookie holds note %q", got)
	}
	if b.CSRF == "" || b.Post("/note", url.Values{"note": {"x"}}).Status != http.StatusOK {
		t.Error("the one cookie does not hold the first visit's token")
	}

	proxies, err := ratelimit.ParseTrustedProxies("0.0.0.0/0")
	if err != nil {
		t.Fatal(err)
	}
	behindTLS := newKitWith(t, s, web.AppOptions{Proxies: proxies}, save)
	r = httptest.NewRequest(http.MethodGet, "/first", nil)
	r.Header.Set("X-Forwarded-Proto", "https")
	res, err = behindTLS.Test(r, -1)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if sc := strings.Join(res.Header.Values(fiber.HeaderSetCookie), "\n"); !strings.Contains(sc, "; Secure") {
		t.Errorf("behind TLS (a trusted proxy's word) the cookie is %q, want Secure", sc)
	}
}
