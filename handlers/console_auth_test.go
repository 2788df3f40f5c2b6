package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"petstore/db"
	"petstore/handlers"
	"petstore/web/ratelimit"
)

func TestConsoleLogin(t *testing.T) {
	a := newTestApp(t)
	a.addStaff(staffName, staffPassword)

	t.Run("signed out is sent to the sign-in page", func(t *testing.T) {
		b := a.browser(t)
		b.get("/staff").wantRedirect("/staff/login")
		b.get("/staff/orders?state=open").wantRedirect("/staff/login?next=%2Fstaff%2Forders%3Fstate%3Dopen")
		p := b.hx("/staff/inventory").wantStatus(http.StatusUnauthorized)
		if got := p.Header.Get("HX-Redirect"); got != "/staff/login" {
			t.Errorf("HX-Redirect = %q, want /staff/login", got)
		}
		b.get("/staff/events").wantStatus(http.StatusUnauthorized)
	})
	t.Run("sign-in page", func(t *testing.T) {
		b := a.browser(t)
		p := b.get("/staff/login").wantStatus(http.StatusOK)
		if p.find(`form[action="/staff/login"] input[name="_csrf"]`).Length() != 1 {
			t.Errorf("sign-in form has no CSRF field")
		}
		if p.find(`label[for="username"]`).Length() != 1 || p.find(`label[for="password"]`).Length() != 1 {
			t.Errorf("fields are not labelled")
		}
		if csp := p.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("CSP = %q", csp)
		}
		c := b.cookies["petstore_staff"]
		if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure {
			t.Fatalf("cookie = %+v, want petstore_staff HttpOnly SameSite=Lax, not Secure over plain HTTP", c)
		}
		if p.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("Cache-Control = %q", p.Header.Get("Cache-Control"))
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		b := a.browser(t)
		p := b.login(staffName, "nope").wantStatus(http.StatusUnauthorized)
		p.wantText("login-error", "Wrong username or password.")
		if v, _ := p.find("#username").Attr("value"); v != staffName {
			t.Errorf("username field = %q, want it kept", v)
		}
		b.get("/staff").wantRedirect("/staff/login")
	})
	t.Run("unknown user", func(t *testing.T) {
		a.browser(t).login("mallory", staffPassword).wantStatus(http.StatusUnauthorized).wantText("login-error", "Wrong username or password.")
	})
	t.Run("empty fields", func(t *testing.T) {
		a.browser(t).login("", "").wantStatus(http.StatusUnprocessableEntity).wantText("login-error", "Enter your username and password.")
	})
	t.Run("OK", func(t *testing.T) {
		b := a.browser(t)
		b.login(staffName, staffPassword).wantRedirect("/staff")
		before := b.csrf
		p := b.get("/staff").wantStatus(http.StatusOK)
		if b.csrf == before || b.csrf == "" {
			t.Errorf("the CSRF token was not renewed at sign-in")
		}
		p.wantText("staff-user", staffName)
		if p.find(`a[aria-current="page"]`).Text() != "Dashboard" {
			t.Errorf("current nav item = %q", p.find(`a[aria-current="page"]`).Text())
		}
		// Signed in, the sign-in page goes to the console.
		b.get("/staff/login").wantRedirect("/staff")
	})
	t.Run("next stays in the console", func(t *testing.T) {
		b := a.browser(t)
		b.get("/staff/login?next=/staff/orders")
		b.post("/staff/login", url.Values{"username": {staffName}, "password": {staffPassword}, "next": {"/staff/orders"}}).wantRedirect("/staff/orders")
		b = a.browser(t)
		b.get("/staff/login")
		b.post("/staff/login", url.Values{"username": {staffName}, "password": {staffPassword}, "next": {"//evil.example/staff"}}).wantRedirect("/staff")
	})
	t.Run("cookie is Secure behind TLS", func(t *testing.T) {
		b := a.browser(t)
		b.header["X-Forwarded-Proto"] = "https"
		b.login(staffName, staffPassword).wantRedirect("/staff")
		if c := b.cookies["petstore_staff"]; c == nil || !c.Secure {
			t.Fatalf("cookie = %+v, want Secure", c)
		}
	})
}

func TestConsoleLockout(t *testing.T) {
	trustAll := func(h *handlers.Handler, _ *ratelimit.Config) {
		h.Proxies, _ = ratelimit.ParseTrustedProxies("0.0.0.0/0, ::/0")
	}
	a := newTestApp(t, trustAll)
	a.addStaff(staffName, staffPassword)
	b := a.browser(t)
	b.header["X-Forwarded-For"] = "192.0.2.10"
	for i := 1; i <= 4; i++ {
		b.login(staffName, "wrong").wantStatus(http.StatusUnauthorized).wantText("login-error", "Wrong username or password.")
	}
	// The fifth failure is checked like the others and says it locks the
	// username for this address…
	b.login(staffName, "wrong").wantStatus(http.StatusUnauthorized).wantText("login-error", "locked for 15 minutes")
	// …so that even the right password is refused, unchecked.
	b.login(staffName, staffPassword).wantStatus(http.StatusTooManyRequests).wantText("login-error", "Try again in 15 minutes")
	b.get("/staff").wantRedirect("/staff/login")

	// Another address is not locked out, nor is another username here.
	other := a.browser(t)
	other.header["X-Forwarded-For"] = "198.51.100.7"
	other.login(staffName, staffPassword).wantRedirect("/staff")
	a.addStaff("bob", "bobs password")
	b.login("bob", "bobs password").wantRedirect("/staff")

	// Fifteen minutes later the lock is over.
	a.clock.Add(15*time.Minute + time.Second)
	c := a.browser(t)
	c.header["X-Forwarded-For"] = "192.0.2.10"
	c.login(staffName, staffPassword).wantRedirect("/staff")
}

func TestConsoleLogout(t *testing.T) {
	a := newTestApp(t)
	b := a.signedIn(t)
	b.get("/staff").wantStatus(http.StatusOK)
	p := b.post("/staff/logout", nil).wantRedirect("/staff/login")
	b.follow(p).wantStatus(http.StatusOK).wantText("flash", "You are signed out.")
	b.get("/staff").wantRedirect("/staff/login")
	// Logging out is a POST: a GET is no route for it.
	b = a.browser(t)
	b.login(staffName, staffPassword).wantRedirect("/staff")
	if p := b.get("/staff/logout"); p.Status == http.StatusSeeOther && p.Header.Get("Location") == "/staff/login" {
		t.Fatalf("GET /staff/logout signed out")
	}
	b.get("/staff").wantStatus(http.StatusOK)
}

func TestConsoleCSRF(t *testing.T) {
	a := newTestApp(t)
	b := a.signedIn(t)
	pet := a.seedPet("Rex", 3)
	path := "/staff/inventory/" + itoa(pet.ID)
	b.post(path, url.Values{"quantity": {"9"}, "_csrf": {""}}).wantStatus(http.StatusForbidden)
	b.post(path, url.Values{"quantity": {"9"}, "_csrf": {"forged"}}).wantStatus(http.StatusForbidden)
	// htmx sends the token in a header instead.
	saved := b.csrf
	b.csrf = "forged"
	b.hxPost(path, url.Values{"quantity": {"9"}}).wantStatus(http.StatusForbidden)
	b.csrf = saved
	if p, _ := a.store.FindPetByID(t.Context(), pet.ID); p.Stock != 3 {
		t.Fatalf("stock = %d after forged requests, want 3", p.Stock)
	}
	b.hxPost(path, url.Values{"quantity": {"9"}}).wantStatus(http.StatusOK)
	// The sign-in form is protected too.
	c := a.browser(t)
	c.get("/staff/login")
	c.post("/staff/login", url.Values{"username": {staffName}, "password": {staffPassword}, "_csrf": {"forged"}}).wantStatus(http.StatusForbidden)
}

// TestConsoleCSPClean checks every page keeps to the CSP: no inline
// scripts, no style attributes, no inline event handlers.
func TestConsoleCSPClean(t *testing.T) {
	a := newTestApp(t)
	b := a.signedIn(t)
	pet := a.seedPet("Rex", 1)
	cats, _, _ := a.store.FindCategories(t.Context(), db.Page{Limit: 1})
	for _, path := range []string{"/staff", "/staff/inventory", "/staff/orders", "/staff/catalog", "/staff/pets/new",
		"/staff/pets/" + itoa(pet.ID) + "/edit", "/staff/categories/new", "/staff/categories/" + itoa(cats[0].ID) + "/edit",
		"/staff/keys", "/staff/keys/1", "/staff/usage", "/staff/login?x"} {
		p := b.get(path)
		if p.Status != http.StatusOK && !(path == "/staff/login?x" && p.Status == http.StatusSeeOther) {
			t.Fatalf("GET %s = %d", path, p.Status)
		}
		if p.Status != http.StatusOK {
			continue
		}
		if n := p.find("script:not([src])").Length(); n > 0 {
			t.Errorf("%s has %d inline scripts", path, n)
		}
		if n := p.find("[style]").Length(); n > 0 {
			t.Errorf("%s has %d style attributes", path, n)
		}
		p.find("*").Each(func(_ int, s *goquery.Selection) {
			for _, at := range s.Nodes[0].Attr {
				if strings.HasPrefix(at.Key, "on") {
					t.Errorf("%s: <%s %s=…> is an inline handler", path, goquery.NodeName(s), at.Key)
				}
			}
		})
		if p.find("h1").Length() != 1 {
			t.Errorf("%s has %d h1", path, p.find("h1").Length())
		}
	}
}
