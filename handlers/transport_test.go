package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"petstore/handlers/handlerstest"
	"petstore/web"
)

// wantTransport fails unless r carries HSTS and Secure cookies exactly
// when tls is set.
func wantTransport(t *testing.T, what string, h http.Header, tls bool) {
	t.Helper()
	if got, want := h.Get("Strict-Transport-Security"), map[bool]string{true: web.HSTS}[tls]; got != want {
		t.Errorf("%s: Strict-Transport-Security = %q, want %q", what, got, want)
	}
	for _, c := range h.Values("Set-Cookie") {
		if secure := strings.Contains(strings.ToLower(c), "; secure"); secure != tls {
			t.Errorf("%s: cookie %q: Secure = %v, want %v", what, c[:strings.IndexByte(c, '=')], secure, tls)
		}
	}
}

// TestTransportWiring: every surface's answers (the shop, the console,
// the API, a page no route has) carry Strict-Transport-Security, and the
// shop's session cookie is Secure, when the request arrived over TLS as
// the app's TRUSTED_PROXIES read X-Forwarded-Proto; neither when another
// peer says so. (The rules of X-Forwarded-Proto and of TLS connections:
// web/transport_test.go; of the cookie: web/browser.)
func TestTransportWiring(t *testing.T) {
	paths := []string{"/", "/cart", "/staff/login", "/api/openapi.json", "/no/such/page"}
	for _, tc := range []struct {
		name, proxies string
		tls           bool
	}{
		{"trusted proxy, https", "0.0.0.0", true}, // app.Test's peer is 0.0.0.0
		{"untrusted proxy, https", "10.0.0.0/8", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := handlerstest.New(t, handlerstest.WithProxies(t, tc.proxies))
			for _, p := range paths {
				r := a.Do(handlerstest.Req{Method: "GET", Path: p, Header: map[string]string{"X-Forwarded-Proto": "https"}})
				if p != "/no/such/page" && r.Status != http.StatusOK {
					t.Fatalf("GET %s = %d", p, r.Status)
				}
				if p == "/cart" && len(r.Header.Values("Set-Cookie")) == 0 {
					t.Fatal("GET /cart set no cookie to check")
				}
				wantTransport(t, "GET "+p, r.Header, tc.tls)
			}
		})
	}
}
