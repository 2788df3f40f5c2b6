package web

import (
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/go-cmp/cmp"

	"petstore/db"
)

// protections are the headers SecurityHeaders and PrivateAnswer set.
type protections struct {
	CSP, NoSniff, Referrer, Frames, CacheControl string
}

// TestSecurityHeaders: a page (SecurityHeaders) runs only same-origin
// scripts, styles and frames, is never sniffed as another type, leaks no
// referrer to other sites and cannot be framed; an answer that depends on
// who asks (PrivateAnswer, SPEC §17) is kept by no cache. Both hold for
// the route's error answers too, since the error handler keeps the
// headers set before the error.
func TestSecurityHeaders(t *testing.T) {
	page := protections{
		CSP:      "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
		NoSniff:  "nosniff",
		Referrer: "same-origin",
		Frames:   "DENY",
	}
	private := protections{CacheControl: PrivateCache}
	ok := func(c *fiber.Ctx) error { return c.SendString("ok") }
	refused := func(*fiber.Ctx) error { return db.Errorf(db.EForbidden, "No.") }
	app := newTestApp(t, AppOptions{}, func(r *Routes) {
		r.Add(route("GET", "/page", SecurityHeaders, ok))
		r.Add(route("GET", "/page/refused", SecurityHeaders, refused))
		r.Add(route("GET", "/private", PrivateAnswer, ok))
		r.Add(route("GET", "/private/refused", PrivateAnswer, refused))
		r.Add(route("GET", "/plain", ok))
	})
	for _, tc := range []struct {
		path   string
		status int
		want   protections
	}{
		{"/page", 200, page},
		{"/page/refused", 403, page},
		{"/private", 200, private},
		{"/private/refused", 403, private},
		{"/plain", 200, protections{}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			a := get(t, app, tc.path)
			got := protections{
				CSP: a.Header.Get("Content-Security-Policy"), NoSniff: a.Header.Get("X-Content-Type-Options"),
				Referrer: a.Header.Get("Referrer-Policy"), Frames: a.Header.Get("X-Frame-Options"), CacheControl: a.Header.Get(fiber.HeaderCacheControl),
			}
			if diff := cmp.Diff(tc.want, got); a.Status != tc.status || diff != "" {
				t.Errorf("status %d, want %d; headers (-want +got):\n%s", a.Status, tc.status, diff)
			}
		})
	}
}
