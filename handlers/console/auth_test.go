package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"petstore/db"
	"petstore/handlers"
	"petstore/handlers/handlerstest"
	"petstore/web"
	"petstore/web/ratelimit"
)

func TestConsoleLogin(t *testing.T) {
	a := handlerstest.New(t)
	a.AddStaff(handlerstest.StaffName, handlerstest.StaffPassword)

	t.Run("signed out is sent to the sign-in page", func(t *testing.T) {
		b := a.Browser(t)
		b.Get("/staff").WantRedirect("/staff/login")
		b.Get("/staff/orders?state=open").WantRedirect("/staff/login?next=%2Fstaff%2Forders%3Fstate%3Dopen")
		p := b.HX("/staff/inventory").WantStatus(http.StatusUnauthorized)
		if got := p.Header.Get("HX-Redirect"); got != "/staff/login" {
			t.Errorf("HX-Redirect = %q, want /staff/login", got)
		}
		b.Get("/staff/events").WantStatus(http.StatusUnauthorized)
	})
	t.Run("sign-in page", func(t *testing.T) {
		b := a.Browser(t)
		p := b.Get("/staff/login").WantStatus(http.StatusOK)
		if p.Find(`form[action="/staff/login"] input[name="_csrf"]`).Length() != 1 {
			t.Errorf("sign-in form has no CSRF field")
		}
		if p.Find(`label[for="username"]`).Length() != 1 || p.Find(`label[for="password"]`).Length() != 1 {
			t.Errorf("fields are not labelled")
		}
		if csp := p.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("CSP = %q", csp)
		}
		c := b.Cookies["petstore_staff"]
		if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure {
			t.Fatalf("cookie = %+v, want petstore_staff HttpOnly SameSite=Lax, not Secure over plain HTTP", c)
		}
		if p.Header.Get("Cache-Control") != web.PrivateCache {
			t.Errorf("Cache-Control = %q", p.Header.Get("Cache-Control"))
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		b := a.Browser(t)
		p := b.Login(handlerstest.StaffName, "nope").WantStatus(http.StatusUnauthorized)
		p.WantText("login-error", "Wrong username or password.")
		if v, _ := p.Find("#username").Attr("value"); v != handlerstest.StaffName {
			t.Errorf("username field = %q, want it kept", v)
		}
		b.Get("/staff").WantRedirect("/staff/login")
	})
	t.Run("unknown user", func(t *testing.T) {
		a.Browser(t).Login("mallory", handlerstest.StaffPassword).WantStatus(http.StatusUnauthorized).WantText("login-error", "Wrong username or password.")
	})
	t.Run("empty fields", func(t *testing.T) {
		a.Browser(t).Login("", "").WantStatus(http.StatusUnprocessableEntity).WantText("login-error", "Enter your username and password.")
	})
	t.Run("OK", func(t *testing.T) {
		b := a.Browser(t)
		b.Login(handlerstest.StaffName, handlerstest.StaffPassword).WantRedirect("/staff")
		before := b.CSRF
		p := b.Get("/staff").WantStatus(http.StatusOK)
		if b.CSRF == before || b.CSRF == "" {
			t.Errorf("the CSRF token was not renewed at sign-in")
		}
		p.WantText("staff-user", handlerstest.StaffName)
		if p.Find(`a[aria-current="page"]`).Text() != "Dashboard" {
			t.Errorf("current nav item = %q", p.Find(`a[aria-current="page"]`).Text())
		}
		// Signed in, the sign-in page goes to the console.
		b.Get("/staff/login").WantRedirect("/staff")
	})
	t.Run("next stays in the console", func(t *testing.T) {
		b := a.Browser(t)
		b.Get("/staff/login?next=/staff/orders")
		b.Post("/staff/login", url.Values{"username": {handlerstest.StaffName}, "password": {handlerstest.StaffPassword}, "next": {"/staff/orders"}}).WantRedirect("/staff/orders")
		b = a.Browser(t)
		b.Get("/staff/login")
		b.Post("/staff/login", url.Values{"username": {handlerstest.StaffName}, "password": {handlerstest.StaffPassword}, "next": {"//evil.example/staff"}}).WantRedirect("/staff")
	})
	t.Run("cookie is Secure behind TLS", func(t *testing.T) {
		// Behind TLS per a trusted proxy (app.Test's peer is 0.0.0.0).
		a := handlerstest.New(t, handlerstest.WithProxies(t, "0.0.0.0"))
		a.AddStaff(handlerstest.StaffName, handlerstest.StaffPassword)
		b := a.Browser(t)
		b.Header["X-Forwarded-Proto"] = "https"
		b.Login(handlerstest.StaffName, handlerstest.StaffPassword).WantRedirect("/staff")
		if c := b.Cookies["petstore_staff"]; c == nil || !c.Secure {
			t.Fatalf("cookie = %+v, want Secure", c)
		}
	})
	t.Run("cookie is not Secure on an untrusted peer's word", func(t *testing.T) {
		b := a.Browser(t) // TRUSTED_PROXIES unset
		b.Header["X-Forwarded-Proto"] = "https"
		b.Login(handlerstest.StaffName, handlerstest.StaffPassword).WantRedirect("/staff")
		if c := b.Cookies["petstore_staff"]; c == nil || c.Secure {
			t.Fatalf("cookie = %+v, want it not Secure", c)
		}
	})
}

func TestConsoleLockout(t *testing.T) {
	trustAll := func(h *handlers.Handler, _ *ratelimit.Config) {
		h.Proxies, _ = ratelimit.ParseTrustedProxies("0.0.0.0/0, ::/0")
	}
	a := handlerstest.New(t, trustAll)
	a.AddStaff(handlerstest.StaffName, handlerstest.StaffPassword)
	b := a.Browser(t)
	b.Header["X-Forwarded-For"] = "192.0.2.10"
	for i := 1; i <= 4; i++ {
		b.Login(handlerstest.StaffName, "wrong").WantStatus(http.StatusUnauthorized).WantText("login-error", "Wrong username or password.")
	}
	// The fifth failure is checked like the others and says it locks the
	// username for this address…
	b.Login(handlerstest.StaffName, "wrong").WantStatus(http.StatusUnauthorized).WantText("login-error", "locked for 15 minutes")
	// …so that even the right password is refused, unchecked.
	b.Login(handlerstest.StaffName, handlerstest.StaffPassword).WantStatus(http.StatusTooManyRequests).WantText("login-error", "Try again in 15 minutes")
	b.Get("/staff").WantRedirect("/staff/login")

	// Another address is not locked out, nor is another username here.
	other := a.Browser(t)
	other.Header["X-Forwarded-For"] = "198.51.100.7"
	other.Login(handlerstest.StaffName, handlerstest.StaffPassword).WantRedirect("/staff")
	a.AddStaff("bob", "bobs password")
	b.Login("bob", "bobs password").WantRedirect("/staff")

	// Fifteen minutes later the lock is over.
	a.Clock.Add(15*time.Minute + time.Second)
	c := a.Browser(t)
	c.Header["X-Forwarded-For"] = "192.0.2.10"
	c.Login(handlerstest.StaffName, handlerstest.StaffPassword).WantRedirect("/staff")
}

func TestConsoleLogout(t *testing.T) {
	a := handlerstest.New(t)
	b := a.SignedIn(t)
	b.Get("/staff").WantStatus(http.StatusOK)
	p := b.Post("/staff/logout", nil).WantRedirect("/staff/login")
	b.Follow(p).WantStatus(http.StatusOK).WantText("flash", "You are signed out.")
	b.Get("/staff").WantRedirect("/staff/login")
	// Logging out is a POST: a GET is no route for it.
	b = a.Browser(t)
	b.Login(handlerstest.StaffName, handlerstest.StaffPassword).WantRedirect("/staff")
	if p := b.Get("/staff/logout"); p.Status == http.StatusSeeOther && p.Header.Get("Location") == "/staff/login" {
		t.Fatalf("GET /staff/logout signed out")
	}
	b.Get("/staff").WantStatus(http.StatusOK)
}

func TestConsoleCSRF(t *testing.T) {
	a := handlerstest.New(t)
	b := a.SignedIn(t)
	pet := a.SeedPet("Rex", 3)
	path := "/staff/inventory/" + handlerstest.Itoa(pet.ID)
	b.Post(path, url.Values{"quantity": {"9"}, "_csrf": {""}}).WantStatus(http.StatusForbidden)
	b.Post(path, url.Values{"quantity": {"9"}, "_csrf": {"forged"}}).WantStatus(http.StatusForbidden)
	// htmx sends the token in a header instead.
	saved := b.CSRF
	b.CSRF = "forged"
	b.HXPost(path, url.Values{"quantity": {"9"}}).WantStatus(http.StatusForbidden)
	b.CSRF = saved
	if p, _ := a.Store.FindPetByID(t.Context(), pet.ID); p.Stock != 3 {
		t.Fatalf("stock = %d after forged requests, want 3", p.Stock)
	}
	b.HXPost(path, url.Values{"quantity": {"9"}}).WantStatus(http.StatusOK)
	// The sign-in form is protected too.
	c := a.Browser(t)
	c.Get("/staff/login")
	c.Post("/staff/login", url.Values{"username": {handlerstest.StaffName}, "password": {handlerstest.StaffPassword}, "_csrf": {"forged"}}).WantStatus(http.StatusForbidden)
}

// TestConsoleCSPClean checks every page keeps to the CSP: no inline
// scripts, no style attributes, no inline event handlers.
func TestConsoleCSPClean(t *testing.T) {
	a := handlerstest.New(t)
	b := a.SignedIn(t)
	pet := a.SeedPet("Rex", 1)
	cats, _, _ := a.Store.FindCategories(t.Context(), db.Page{Limit: 1})
	for _, path := range []string{"/staff", "/staff/inventory", "/staff/orders", "/staff/catalog", "/staff/pets/new",
		"/staff/pets/" + handlerstest.Itoa(pet.ID) + "/edit", "/staff/categories/new", "/staff/categories/" + handlerstest.Itoa(cats[0].ID) + "/edit",
		"/staff/keys", "/staff/keys/1", "/staff/usage", "/staff/login?x"} {
		p := b.Get(path)
		if p.Status != http.StatusOK && !(path == "/staff/login?x" && p.Status == http.StatusSeeOther) {
			t.Fatalf("GET %s = %d", path, p.Status)
		}
		if p.Status != http.StatusOK {
			continue
		}
		if n := p.Find("script:not([src])").Length(); n > 0 {
			t.Errorf("%s has %d inline scripts", path, n)
		}
		if n := p.Find("[style]").Length(); n > 0 {
			t.Errorf("%s has %d style attributes", path, n)
		}
		p.Find("*").Each(func(_ int, s *goquery.Selection) {
			for _, at := range s.Nodes[0].Attr {
				if strings.HasPrefix(at.Key, "on") {
					t.Errorf("%s: <%s %s=…> is an inline handler", path, goquery.NodeName(s), at.Key)
				}
			}
		})
		if p.Find("h1").Length() != 1 {
			t.Errorf("%s has %d h1", path, p.Find("h1").Length())
		}
	}
}
